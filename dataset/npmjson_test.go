package dataset

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDecodeClass(t *testing.T) {
	tests := []struct {
		name        string
		give        string
		giveFormat  classFormat
		wantPix     []byte
		wantN       int
		wantDropped int
	}{
		{"records", `{"data":[[1,2,3],[4,5,255]]}`, recordsOfBytes, []byte{1, 2, 3, 4, 5, 255}, 2, 0},
		{"records with empties", `{"data":[[],[1,2,3],[],[4,5,6],[]]}`, recordsOfBytes, []byte{1, 2, 3, 4, 5, 6}, 2, 3},
		{"records whitespace", " {\n \"data\" : [ [ 1 , 2 ,3 ]\t,\r\n[7,8,9] ] } \n", recordsOfBytes, []byte{1, 2, 3, 7, 8, 9}, 2, 0},
		{"records integral floats", `{"data":[[1.0,2e1,0.3e1]]}`, recordsOfBytes, []byte{1, 20, 3}, 1, 0},
		{"records none", `{"data":[]}`, recordsOfBytes, nil, 0, 0},
		{"records only empties", `{"data":[[],[]]}`, recordsOfBytes, nil, 0, 2},
		// round(v·255): 0.1·255 = 25.500000000000004 in float64, so 26; 0.624·255 = 159.12 → 159.
		{"flat", `{ "data": [0,1,0.5,0.1,0.624,0.002]}`, flatUnits, []byte{0, 255, 128, 26, 159, 1}, 2, 0},
		{"flat exponent", `{"data":[1e-3,1.0,1E0]}`, flatUnits, []byte{0, 255, 255}, 1, 0},
		{"flat none", `{"data":[]}`, flatUnits, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte per Read exercises every buffer boundary.
			pix, n, dropped, err := decodeClass(iotest.OneByteReader(strings.NewReader(tt.give)), tt.giveFormat, 3)
			if err != nil {
				t.Fatalf("decodeClass(%q) error: %v", tt.give, err)
			}
			if !bytes.Equal(pix, tt.wantPix) || n != tt.wantN || dropped != tt.wantDropped {
				t.Errorf("decodeClass(%q) = %v, %d, %d; want %v, %d, %d", tt.give, pix, n, dropped, tt.wantPix, tt.wantN, tt.wantDropped)
			}
		})
	}
}

func TestDecodeClassRejects(t *testing.T) {
	tests := []struct {
		name       string
		give       string
		giveFormat classFormat
	}{
		{"short record", `{"data":[[1,2,3],[4,5]]}`, recordsOfBytes},
		{"long record", `{"data":[[1,2,3,4]]}`, recordsOfBytes},
		{"pixel above 255", `{"data":[[1,2,256]]}`, recordsOfBytes},
		{"negative pixel", `{"data":[[1,2,-1]]}`, recordsOfBytes},
		{"fractional pixel", `{"data":[[1,2,3.5]]}`, recordsOfBytes},
		{"not a number", `{"data":[[1,2,"3"]]}`, recordsOfBytes},
		{"flat in records format", `{"data":[1,2,3]}`, recordsOfBytes},
		{"missing comma", `{"data":[[1 2 3]]}`, recordsOfBytes},
		{"trailing comma", `{"data":[[1,2,3],]}`, recordsOfBytes},
		{"other key", `{"images":[[1,2,3]]}`, recordsOfBytes},
		{"unclosed", `{"data":[[1,2,3]`, recordsOfBytes},
		{"no closing brace", `{"data":[[1,2,3]]`, recordsOfBytes},
		{"data after end", `{"data":[[1,2,3]]} x`, recordsOfBytes},
		{"empty input", ``, recordsOfBytes},
		{"long number", `{"data":[[1,2,` + strings.Repeat("0", 40) + `]]}`, recordsOfBytes},
		{"flat not whole images", `{"data":[0,1,0,1]}`, flatUnits},
		{"flat above 1", `{"data":[0,1,1.5]}`, flatUnits},
		{"flat negative", `{"data":[0,1,-0.5]}`, flatUnits},
		{"flat integer 2", `{"data":[0,1,2]}`, flatUnits},
		{"flat bad number", `{"data":[0,1,0.5.5]}`, flatUnits},
		{"flat nested", `{"data":[[0,1,0]]}`, flatUnits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pix, n, _, err := decodeClass(strings.NewReader(tt.give), tt.giveFormat, 3)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("decodeClass(%q) = %v, %d, %v; want an ErrInvalid error", tt.give, pix, n, err)
			}
		})
	}
}

func FuzzDecodeClass(f *testing.F) {
	f.Add([]byte(`{"data":[[1,2,3],[],[4,5,6]]}`), true)
	f.Add([]byte(`{ "data": [0,1,0.5,0.1,0.624,0.002]}`), false)
	f.Add([]byte(`{"data":[[1.0,2e1,0.3e1]]} `), true)
	f.Fuzz(func(t *testing.T, data []byte, records bool) {
		format := map[bool]classFormat{true: recordsOfBytes, false: flatUnits}[records]
		pix, n, _, err := decodeClass(iotest.HalfReader(bytes.NewReader(data)), format, 3)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("decodeClass error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if len(pix) != 3*n {
			t.Errorf("decodeClass = %d bytes for %d images of 3", len(pix), n)
		}
	})
}
