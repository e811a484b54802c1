// Package json gives fast, allocation-light access to request bodies in JSON and FlatBuffers.
package json
