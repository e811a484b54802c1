package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/simdedge/simdedge/parse/url"
)

// urlMaxLine bounds one JSON input line of `simdedge url`; longer lines
// are reported as errors rather than buffered without limit.
const urlMaxLine = 16 << 20

// urlRequest is one input line: {"input": "...", "base": "..." or null}.
type urlRequest struct {
	Input *string `json:"input"`
	Base  *string `json:"base"`
}

// urlResult is one output line; Failure lines carry only input and base.
type urlResult struct {
	Input    string  `json:"input"`
	Base     *string `json:"base"`
	Failure  bool    `json:"failure,omitempty"`
	Href     *string `json:"href,omitempty"`
	Origin   *string `json:"origin,omitempty"`
	Protocol *string `json:"protocol,omitempty"`
	Username *string `json:"username,omitempty"`
	Password *string `json:"password,omitempty"`
	Host     *string `json:"host,omitempty"`
	Hostname *string `json:"hostname,omitempty"`
	Port     *string `json:"port,omitempty"`
	Pathname *string `json:"pathname,omitempty"`
	Search   *string `json:"search,omitempty"`
	Hash     *string `json:"hash,omitempty"`
}

// runURL implements `simdedge url`: it reads JSON lines of
// {"input", "base"} from stdin and writes one JSON line per input with the
// URL's components (as the WHATWG URL API reports them) or "failure": true.
// Malformed lines are reported on stderr and make the exit status 1; the
// remaining lines are still processed.
func runURL(stdin io.Reader, stdout, stderr io.Writer) int {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), urlMaxLine)
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	status := 0
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var req urlRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || req.Input == nil {
			fmt.Fprintf(stderr, "simdedge url: line %d: want a JSON object with a string \"input\"\n", line)
			status = 1
			continue
		}
		if err := enc.Encode(urlResolve(*req.Input, req.Base)); err != nil {
			fmt.Fprintf(stderr, "simdedge url: %v\n", err)
			return 1
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "simdedge url: line %d: %v\n", line+1, err)
		return 1
	}
	return status
}

func urlResolve(input string, base *string) urlResult {
	res := urlResult{Input: input, Base: base}
	var b *url.URL
	if base != nil {
		var err error
		if b, err = url.Parse(*base, nil); err != nil {
			res.Failure = true
			return res
		}
	}
	u, err := url.Parse(input, b)
	if err != nil {
		res.Failure = true
		return res
	}
	s := func(v string) *string { return &v }
	res.Href, res.Origin, res.Protocol = s(u.Href()), s(u.Origin()), s(u.Protocol())
	res.Username, res.Password = s(u.Username()), s(u.Password())
	res.Host, res.Hostname, res.Port = s(u.Host()), s(u.Hostname()), s(u.Port())
	res.Pathname, res.Search, res.Hash = s(u.Pathname()), s(u.Search()), s(u.Hash())
	return res
}
