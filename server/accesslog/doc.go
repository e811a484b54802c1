// Package accesslog writes one line per request (JSON or Apache's combined
// format) through a bounded asynchronous buffer that never blocks the
// caller, with a file's lines in time order.
//
// Lines are formatted into per-shard byte buffers: a connection takes a
// shard when accepted (Log.Next) and appends its requests' lines there
// under the shard's mutex, which only the connections on that shard and the
// writer's rounds ever take. A full buffer is queued for the one writer
// goroutine and replaced by a free one. The number of buffers is fixed:
// when the sink stalls (a full disk, a pipe nobody reads) the free list
// runs dry, and a line that finds neither room in its shard's buffer nor a
// free buffer is dropped and counted (Log.Dropped, published as
// simdedge_access_log_dropped_total), never waited for.
//
// Order. Every 10 ms (woken earlier only when free buffers run low, so a
// hand-over costs no thread wakeup on the request path) the writer runs a
// round (writer.go): it takes every shard's buffer and the queued full
// ones, and merges their lines by time (merge.go; each buffer holds
// records, a line behind its time and length, so the merge parses no
// line). A shard's lines are in time order because Write raises a line's
// time to the shard's floor: its last line's time, and the start of the
// writer's last round. So the lines of one round are all older than the
// next round's, and a file's lines are in time order. A line's time
// moves only when its Write comes after a later line of its shard, or
// after a round that began after its response ended: by the few
// microseconds between the end and the Write, as a rule. (A wall clock
// stepped back holds the lines at the floor until it catches up.)
//
// The writer writes whole lines, in writes of up to a buffer, and reopens
// the file (Log.Reopen, SIGUSR1 for logrotate) between two rounds, so a
// line is never split across the old and the new file.
//
// The formatting allocates nothing on a warm shard: the line is formatted
// straight into the shard's buffer once an upper bound of its length
// (lineBound: long fields are cut, see the max* constants) fits.
package accesslog
