// Package procstat reads the CPU time (user + system) that a process and its
// descendants have used, from /proc/PID/stat, so that a load benchmark can
// report server CPU time per request: the delta over a run divided by the
// requests completed. Descendants count because nginx serves from worker
// processes that its master forks. It also reads a process's resident
// memory (now and at its peak) from /proc/PID/status, for the attack suite.
package procstat
