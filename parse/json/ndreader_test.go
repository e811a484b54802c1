package json

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestNDReader(t *testing.T) {
	in := "{\"n\":1}\n\n  \n[2,3]\r\n\"four\"\n{\"n\":5}"
	for _, p := range engineParsers(Options{}) {
		for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)), iotest.DataErrReader(strings.NewReader(in))} {
			nr := NewNDReader(r, p, 0)
			var got []any
			for {
				doc, err := nr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, toAny(t, doc.Root()))
			}
			if len(got) != 4 || got[2] != "four" {
				t.Fatalf("%v: got %v", p.Engine(), got)
			}
		}
	}
}

func TestNDReaderErrors(t *testing.T) {
	p := NewParser(Options{})
	nr := NewNDReader(strings.NewReader("[1]\n[2,]\n"), p, 0)
	if _, err := nr.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := nr.Next()
	var e *Error
	if !errors.As(err, &e) || e.Offset != 7 {
		t.Fatalf("error %v, want offset 7 in the stream", err)
	}
	nr = NewNDReader(strings.NewReader(strings.Repeat("1", 100)+"\n"), p, 10)
	if _, err := nr.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("long line: %v", err)
	}
	boom := errors.New("boom")
	nr = NewNDReader(iotest.ErrReader(boom), p, 0)
	if _, err := nr.Next(); !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}

func TestNDReaderAllocs(t *testing.T) {
	line := `{"a":[1,2,3],"b":"x"}` + "\n"
	src := strings.NewReader("")
	p := NewParser(Options{})
	nr := NewNDReader(src, p, 0)
	data := strings.Repeat(line, 100)
	run := func() {
		src.Reset(data)
		nr.r, nr.rerr, nr.start, nr.end = src, nil, 0, 0
		for {
			if _, err := nr.Next(); err != nil {
				break
			}
		}
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("%v allocations per stream", n)
	}
}
