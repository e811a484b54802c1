// Package rdma is the RDMA transport for server, over libfabric send/receive queues.
package rdma
