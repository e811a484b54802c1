package main

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
)

func TestAdminUnreloadable(t *testing.T) {
	parse := func(admin string) *config.Config {
		c, err := config.Parse([]byte(admin + "routes:\n  - match: {path: /}\n    respond: {status: 200}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	on := parse("admin: {address: \"127.0.0.1:9901\"}\n")
	if err := checkReloadable(on, parse("admin: {address: \"127.0.0.1:9901\", pprof: false}\n")); err != nil {
		t.Errorf("same admin refused: %v", err)
	}
	for in, key := range map[string]string{
		"":                                       "admin.address",
		"admin: {address: \"127.0.0.1:9902\"}\n": "admin.address",
		"admin: {address: \"127.0.0.1:9901\", pprof: true}\n": "admin.pprof",
	} {
		err := checkReloadable(on, parse(in))
		if err == nil || !strings.HasPrefix(err.Error(), key+": cannot be changed by a reload") {
			t.Errorf("%q: err %v, want refusal of %s", in, err, key)
		}
	}
}
