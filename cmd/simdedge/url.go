package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/simdedge/simdedge/parse/url"
)

// urlMaxLine bounds one input line of `simdedge url`; longer lines
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

const urlSynopsis = `usage: simdedge url [-base URL] [URL...]

Parses URLs as the WHATWG URL Standard (and browsers) do and prints one JSON
line per URL with its components (href, origin, protocol, username,
password, host, hostname, port, pathname, search, hash), or "failure": true.
The URLs come from the arguments or, without any, from standard input, one a
line: a plain URL, or a JSON object {"input": URL, "base": URL or null} (the
form of the WPT test data). Plain URLs resolve against -base when given.
A malformed JSON line is reported on standard error, the other lines are
still parsed, and the exit status is 1.

`

// runURL implements `simdedge url`: it parses the URLs of its arguments,
// or of stdin's lines, and writes one JSON line per input with the URL's
// components (as the WHATWG URL API reports them) or "failure": true.
// Before, stdin took only JSON lines and `url -h` waited on stdin.
func runURL(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("url", stderr)
	base := fs.String("base", "", "resolve plain URLs against `URL`")
	if err := fs.Parse(args); err != nil {
		return argsFailed(err, fs, urlSynopsis, stdout, stderr)
	}
	var plainBase *string
	if *base != "" {
		plainBase = base
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if fs.NArg() > 0 {
		for _, in := range fs.Args() {
			if err := enc.Encode(urlResolve(in, plainBase)); err != nil {
				fmt.Fprintf(stderr, "simdedge url: %v\n", err)
				return 1
			}
		}
		return 0
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), urlMaxLine)
	status := 0
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		input, inBase := string(bytes.TrimSuffix(text, []byte("\r"))), plainBase
		// No URL begins with "{" (the parser would fail on it without a
		// base, and a relative "{" path is not worth a second syntax), so
		// "{" marks a JSON line.
		if bytes.TrimLeft(text, " \t")[0] == '{' {
			var req urlRequest
			if err := json.Unmarshal(text, &req); err != nil || req.Input == nil {
				fmt.Fprintf(stderr, "simdedge url: line %d: want a URL or a JSON object with a string \"input\"\n", line)
				status = 1
				continue
			}
			input, inBase = *req.Input, req.Base
		}
		if err := enc.Encode(urlResolve(input, inBase)); err != nil {
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
