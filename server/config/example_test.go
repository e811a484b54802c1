package config_test

import (
	"fmt"

	"github.com/simdedge/simdedge/server/config"
)

func ExampleParse() {
	_, err := config.Parse([]byte(`
routes:
  - match: {path_prefix: /}
    proxy: {upstream: app}
`))
	fmt.Println(err)
	// Output: config: line 4: routes[0].proxy.upstream: names no upstream
}

func ExampleConfig_Build() {
	c, err := config.Parse([]byte(`
upstreams:
  - name: app
    targets: ["127.0.0.1:9001"]
routes:
  - match: {path_prefix: /healthz}
    respond: {status: 200, body: "ok\n"}
  - match: {host: "api.example.com", path_prefix: /}
    proxy: {upstream: app}
`))
	if err != nil {
		panic(err)
	}
	snap, err := c.Build(config.BuildOptions{})
	if err != nil {
		panic(err)
	}
	defer snap.Close()
	fmt.Println(len(snap.Table.Routes()), snap.UpstreamNames(), c.ServerOptions().Timeouts.ReadHeader)
	// Output: 2 [app] 10s
}
