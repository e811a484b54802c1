package admin

import "runtime"

func goVersion() string { return runtime.Version() }
