package config

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/simdedge/simdedge/server/ratelimit/rls"
	"github.com/simdedge/simdedge/server/rewrite"
	"go.yaml.in/yaml/v3"
)

// Global rate limits (issue 32) over Envoy's rate-limit service protocol,
// beside a route's local limit:
//
//	routes:
//	  - match: {path_prefix: /api/}
//	    rate_limit:
//	      rate: 100                      # local, per instance (optional)
//	      service:                       # global, shared by the fleet
//	        address: "10.0.0.9:8081"
//	        domain: edge
//	        descriptors:
//	          - entries: [{key: remote_address, value: "{client_ip}"}]
//	          - entries: [{key: host, value: "{host}"}, {key: path, value: "{path}"}]
//	        failure_mode: allow          # or deny (500)
//	        timeout: 20ms
//
// A descriptor is written as the protocol has it (a RateLimitDescriptor's
// entries). Descriptor values are templates with the variables of header templates
// (server/rewrite; captures excepted). The client is built only with
// -tags fleet (server/ratelimit/rls); without it such a file parses (so
// that one file serves both builds' checks of its syntax) and Build refuses
// it, naming the tag: simdedge check and serve both build.

// RateLimitService is rate_limit.service.
type RateLimitService struct {
	Address     string       `yaml:"address"`
	Domain      string       `yaml:"domain"`
	Descriptors []Descriptor `yaml:"descriptors"`
	FailureMode string       `yaml:"failure_mode"`
	Timeout     Duration     `yaml:"timeout"`
	parsed      []rls.Descriptor
}

// Descriptor is one descriptor of rate_limit.service.
type Descriptor struct {
	Entries []DescEntry `yaml:"entries"`
}

// DescEntry is one entry of a descriptor.
type DescEntry struct {
	Key   string `yaml:"key"`
	Value string `yaml:"value"`
}

func (d *decoder) rateLimitService(dst **RateLimitService) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		s := &RateLimitService{}
		*dst = s
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"address": func(v *yaml.Node, key string) {
				d.str(&s.Address)(v, key)
				if _, port, err := net.SplitHostPort(s.Address); err != nil || port == "" {
					d.fail(v, key, `must be "host:port"`)
				}
			},
			"domain":      d.str(&s.Domain),
			"descriptors": d.descriptors(s),
			"failure_mode": func(v *yaml.Node, key string) {
				d.str(&s.FailureMode)(v, key)
				if s.FailureMode != string(rls.FailAllow) && s.FailureMode != string(rls.FailDeny) {
					d.fail(v, key, "must be allow or deny")
				}
			},
			"timeout": d.duration(&s.Timeout),
		})
		for _, k := range []struct {
			name string
			ok   bool
		}{{"address", s.Address != ""}, {"domain", s.Domain != ""}, {"descriptors", len(s.Descriptors) > 0}} {
			if !k.ok {
				d.fail(v, key+"."+k.name, "missing")
			}
		}
	}
}

// descriptors decodes a list of descriptors, each a list of {key, value}.
func (d *decoder) descriptors(s *RateLimitService) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		if v.Kind != yaml.SequenceNode || len(v.Content) > rls.MaxDescriptors {
			d.fail(v, key, fmt.Sprintf("must be a list of at most %d descriptors", rls.MaxDescriptors))
			return
		}
		for i, dn := range v.Content {
			dk := fmt.Sprintf("%s[%d]", key, i)
			var entries []DescEntry
			var desc rls.Descriptor
			d.fields(dn, dk, map[string]func(*yaml.Node, string){
				"entries": func(v *yaml.Node, key string) {
					if v.Kind != yaml.SequenceNode || len(v.Content) == 0 || len(v.Content) > rls.MaxEntries {
						d.fail(v, key, fmt.Sprintf("must be a list of 1-%d entries {key, value}", rls.MaxEntries))
						return
					}
					for j, en := range v.Content {
						ek := fmt.Sprintf("%s[%d]", key, j)
						var e DescEntry
						var t rewrite.Template
						d.fields(en, ek, map[string]func(*yaml.Node, string){
							"key": d.str(&e.Key),
							"value": func(v *yaml.Node, key string) {
								d.template(&e.Value, &t)(v, key)
								if t.MaxCapture() >= 0 {
									d.fail(v, key, "path_regex captures are not available in descriptors")
								}
							},
						})
						if e.Key == "" {
							d.fail(en, ek+".key", "missing")
						}
						if e.Value == "" {
							d.fail(en, ek+".value", "missing")
						}
						entries = append(entries, e)
						desc = append(desc, rls.Entry{Key: e.Key, Value: t})
					}
				},
			})
			if len(entries) == 0 {
				d.fail(dn, dk+".entries", "missing")
			}
			s.Descriptors = append(s.Descriptors, Descriptor{Entries: entries})
			s.parsed = append(s.parsed, desc)
		}
	}
}

// serviceDefaults fills the service's defaults.
func (s RateLimitService) withDefaults() *RateLimitService {
	if s.FailureMode == "" {
		s.FailureMode = string(rls.FailAllow)
	}
	if s.Timeout == 0 {
		s.Timeout = Duration(rls.DefaultTimeout)
	}
	return &s
}

// client builds the service's client (checked when decoded).
func (s *RateLimitService) client(log *slog.Logger) (*rls.Client, error) {
	e := s.withDefaults()
	return rls.New(rls.Options{Address: e.Address, Domain: e.Domain, Descriptors: e.parsed,
		FailureMode: rls.FailureMode(e.FailureMode), Timeout: time.Duration(e.Timeout), Logger: log})
}
