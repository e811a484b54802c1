package router

import "github.com/simdedge/simdedge/server"

// Compress gives h the response compression c (issue 23), a step of the
// plan of the route h serves (server.Plan.Compress, steps.go): the
// server's ResponseWriter applies c to whatever the route's action
// writes, inline answers on the loop and the loop's own proxy included
// (its relay writes through the same ResponseWriter, at most one 16 KiB
// upstream read per event, so the CPU a turn spends compressing is
// bounded by that read).
func Compress(h server.Handler, c server.Compressor) server.Handler {
	return addStep(h, func(pl *server.Plan) bool {
		if pl.Compress != nil {
			return false
		}
		pl.Compress = c
		return true
	})
}
