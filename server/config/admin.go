package config

import (
	"net"
	"net/netip"

	"go.yaml.in/yaml/v3"
)

// Admin is the admin listener (metrics, health, readiness, the effective
// config, upstream state, optionally pprof): `admin:`. It is off unless
// Address is set, and it serves only on a loopback address unless Public
// says otherwise: /config and pprof tell an attacker much, so reaching
// them from the network must be a decision written in the file.
type Admin struct {
	// Address is host:port with an IP literal or "localhost"; empty: no
	// admin listener.
	Address string `yaml:"address"`
	// PProf serves net/http/pprof under /debug/pprof/ (default false:
	// profiles cost CPU and reveal internals).
	PProf *bool `yaml:"pprof"`
	// Public allows an Address that is not loopback (default false).
	Public *bool `yaml:"public"`
	line   int
}

// Enabled reports whether the admin listener runs.
func (a *Admin) Enabled() bool { return a != nil && a.Address != "" }

// PProfOn reports whether /debug/pprof/ is served.
func (a *Admin) PProfOn() bool { return a != nil && a.PProf != nil && *a.PProf }

func (a Admin) withDefaults() *Admin {
	f := false
	if a.PProf == nil {
		a.PProf = &f
	}
	if a.Public == nil {
		a.Public = &f
	}
	return &a
}

func (d *decoder) admin(v *yaml.Node, key string, c *Config) {
	a := &Admin{line: v.Line}
	d.fields(v, key, map[string]func(*yaml.Node, string){
		"address": func(v *yaml.Node, k string) {
			d.str(&a.Address)(v, k)
			if a.Address != "" {
				if msg := adminAddrProblem(a.Address); msg != "" {
					d.fail(v, k, msg)
				}
			}
			a.line = v.Line
		},
		"pprof":  d.boolean(&a.PProf),
		"public": d.boolean(&a.Public),
	})
	c.Admin = a
}

// adminAddrProblem checks the form of an admin address.
func adminAddrProblem(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return `must be host:port, such as "127.0.0.1:9901"`
	}
	if msg := portRangeProblem(port, minListenPort); msg != "" {
		return msg
	}
	if host == "localhost" {
		return ""
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return `host must be an IP address or "localhost"`
	}
	return ""
}

// validateAdmin refuses a non-loopback admin address unless public is set.
func (c *Config) validateAdmin(d *decoder) {
	a := c.Admin
	if !a.Enabled() || a.Public != nil && *a.Public {
		return
	}
	host, _, err := net.SplitHostPort(a.Address)
	if err != nil || host == "localhost" {
		return // form errors were reported while decoding
	}
	if ip, err := netip.ParseAddr(host); err == nil && !ip.IsLoopback() {
		d.fail(&yaml.Node{Line: a.line}, "admin.address", "is not a loopback address: the admin endpoints reveal the config and internals; set admin.public: true to serve them there")
	}
}
