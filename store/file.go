package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// A blob file holding models, updates and server state:
//
//	"FLSWBLOB"            8 bytes magic
//	header length         uint32, little-endian
//	header                JSON: Header
//	sections              in header order: float32 vectors little-endian, or JSON bytes
//	checksum              32 bytes: SHA-256 of everything before it
//
// Decoding checks the magic, the header, every section's size and the
// checksum; a file that fails any check is ErrCorrupt, never used.
const (
	magic      = "FLSWBLOB"
	fileFormat = 1
	maxHeader  = 1 << 20
)

// Header describes a blob file.
type Header struct {
	Format   int       `json:"format"`
	Kind     string    `json:"kind"` // "global", "update", "state"
	Arch     string    `json:"arch,omitempty"`
	Round    int       `json:"round"`
	Client   int       `json:"client"`
	Sections []Section `json:"sections"`
}

// Section is one named part of a file.
type Section struct {
	Name string `json:"name"`
	Type string `json:"type"` // "f32" or "json"
	Len  int    `json:"len"`  // elements for f32, bytes for json
}

// File is a decoded blob file.
type File struct {
	Header
	F32  map[string][]float32
	JSON map[string]json.RawMessage
}

// NewFile returns an empty file of the given kind.
func NewFile(kind, arch string, round, client int) *File {
	return &File{Header: Header{Format: fileFormat, Kind: kind, Arch: arch, Round: round, Client: client},
		F32: map[string][]float32{}, JSON: map[string]json.RawMessage{}}
}

// AddF32 appends a float32 section.
func (f *File) AddF32(name string, v []float32) *File {
	f.Sections = append(f.Sections, Section{Name: name, Type: "f32", Len: len(v)})
	f.F32[name] = v
	return f
}

// AddVectors appends one float32 section per entry of vs, named prefix +
// its key, in sorted key order.
func (f *File) AddVectors(prefix string, vs map[string][]float32) *File {
	for _, name := range slices.Sorted(maps.Keys(vs)) {
		f.AddF32(prefix+name, vs[name])
	}
	return f
}

// VectorsWith returns the float32 sections whose names start with prefix,
// keyed by the rest of the name (nil when there are none).
func (f *File) VectorsWith(prefix string) map[string][]float32 {
	var out map[string][]float32
	for _, s := range f.Sections {
		if name, ok := strings.CutPrefix(s.Name, prefix); ok && s.Type == "f32" && name != "" {
			if out == nil {
				out = map[string][]float32{}
			}
			out[name] = f.F32[s.Name]
		}
	}
	return out
}

// AddJSON appends a JSON section holding v.
func (f *File) AddJSON(name string, v any) (*File, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("store: encode section %s: %w", name, err)
	}
	f.Sections = append(f.Sections, Section{Name: name, Type: "json", Len: len(b)})
	f.JSON[name] = b
	return f, nil
}

// Encode serialises f and returns the bytes and their SHA-256 (hex).
func (f *File) Encode() ([]byte, string, error) {
	h, err := json.Marshal(f.Header)
	if err != nil {
		return nil, "", err
	}
	size := len(magic) + 4 + len(h) + sha256.Size
	for _, s := range f.Sections {
		if s.Type == "f32" {
			size += 4 * s.Len
		} else {
			size += s.Len
		}
	}
	buf := make([]byte, 0, size)
	buf = append(buf, magic...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(h)))
	buf = append(buf, h...)
	for _, s := range f.Sections {
		switch s.Type {
		case "f32":
			for _, v := range f.F32[s.Name] {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
		case "json":
			buf = append(buf, f.JSON[s.Name]...)
		default:
			return nil, "", fmt.Errorf("store: section %s has unknown type %q", s.Name, s.Type)
		}
	}
	sum := sha256.Sum256(buf)
	buf = append(buf, sum[:]...)
	return buf, hex.EncodeToString(sum[:]), nil
}

// DecodeFile parses and verifies a blob file. name is used in errors.
func DecodeFile(name string, b []byte) (*File, error) {
	corrupt := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s: %w", name, fmt.Sprintf(format, a...), ErrCorrupt)
	}
	if len(b) < len(magic)+4+sha256.Size || string(b[:len(magic)]) != magic {
		return nil, corrupt("not a model/state file (bad magic or too short)")
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, corrupt("checksum mismatch")
	}
	hl := int(binary.LittleEndian.Uint32(body[len(magic):]))
	off := len(magic) + 4
	if hl > maxHeader || off+hl > len(body) {
		return nil, corrupt("header length %d out of range", hl)
	}
	f := &File{F32: map[string][]float32{}, JSON: map[string]json.RawMessage{}}
	if err := json.Unmarshal(body[off:off+hl], &f.Header); err != nil {
		return nil, corrupt("header: %v", err)
	}
	if f.Format != fileFormat {
		return nil, corrupt("format %d; this build reads format %d", f.Format, fileFormat)
	}
	off += hl
	for _, s := range f.Sections {
		if s.Len < 0 {
			return nil, corrupt("section %s has negative length", s.Name)
		}
		switch s.Type {
		case "f32":
			if s.Len > (len(body)-off)/4 {
				return nil, corrupt("section %s truncated", s.Name)
			}
			v := make([]float32, s.Len)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[off:]))
				off += 4
			}
			f.F32[s.Name] = v
		case "json":
			if s.Len > len(body)-off {
				return nil, corrupt("section %s truncated", s.Name)
			}
			f.JSON[s.Name] = json.RawMessage(body[off : off+s.Len])
			off += s.Len
		default:
			return nil, corrupt("section %s has unknown type %q", s.Name, s.Type)
		}
	}
	if off != len(body) {
		return nil, corrupt("%d trailing bytes", len(body)-off)
	}
	return f, nil
}

// Vector returns the named float32 section, checking its length when want >= 0.
func (f *File) Vector(name string, want int) ([]float32, error) {
	v, ok := f.F32[name]
	if !ok {
		return nil, fmt.Errorf("store: %s file has no %q section: %w", f.Kind, name, ErrCorrupt)
	}
	if want >= 0 && len(v) != want {
		return nil, fmt.Errorf("store: %s section %q has %d values; the model has %d (was the file written for another architecture?): %w", f.Kind, name, len(v), want, ErrCorrupt)
	}
	return v, nil
}

// Decode unmarshals the named JSON section into dst.
func (f *File) Decode(name string, dst any) error {
	b, ok := f.JSON[name]
	if !ok {
		return fmt.Errorf("store: %s file has no %q section: %w", f.Kind, name, ErrCorrupt)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("store: %s section %q: %v: %w", f.Kind, name, err, ErrCorrupt)
	}
	return nil
}

// Checksum returns the hex SHA-256 of a float32 vector's little-endian bytes:
// the identity of a model, used to compare runs.
func Checksum(w []float32) string {
	h := sha256.New()
	buf := make([]byte, 0, 4096)
	for i, v := range w {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) || i == len(w)-1 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
