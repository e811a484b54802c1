// Package keyhook lets the reference generator's tests see which keys the
// config decoder accepts in each section, so that a key the decoder reads
// but the config types (and so docs/config.md) lack is caught. Nothing
// sets Seen outside those tests.
package keyhook

// Seen, when not nil, is called for every mapping the decoder reads with
// its dotted path ("routes[0].match") and the keys it accepts there.
var Seen func(path string, keys []string)
