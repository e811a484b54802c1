// Package xds follows an xDS control plane (Envoy's discovery protocol)
// over the aggregated discovery stream (ADS; state of the world or delta) and
// translates what it sends into simdedge's own configuration, so that the
// program applies it through the same path as a SIGHUP reload
// (config.Parse, then Build with the running snapshot as Previous).
//
// The stages, one file each:
//   - fields.go: which fields of each resource simdedge honours; a field
//     it does not is refused by name (a NACK), never ignored;
//   - listener.go, route.go, cluster.go, endpoint.go: Listener,
//     RouteConfiguration, Cluster and ClusterLoadAssignment into the
//     listeners, routes and upstreams of a config document (Translate);
//   - merge.go: that document beside the file's static configuration,
//     parsed and validated by server/config (Merge);
//   - client.go, session.go, handle.go, delta.go: the ADS stream (state
//     of the world, or incremental; session.go is what both share), its
//     ACKs and NACKs, and reconnection with backoff and jitter;
//     status.go: what the admin /config and the metrics show of it.
//
// docs/xds.md is the table of fields honoured and refused;
// docs/decisions/0044-xds-and-fleet-scale.md says why the mapping is as it
// is.
package xds
