// Package sysinfo records the machine a benchmark ran on: CPU model and the
// SIMD flags that matter to simdedge, core count, kernel, Go version,
// the repository commit and the load average, so that a report says what
// its numbers were measured on and how busy the machine was.
package sysinfo
