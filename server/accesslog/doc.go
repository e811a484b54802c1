// Package accesslog writes one line per request (JSON or Apache's combined
// format) through a bounded asynchronous buffer that never blocks the
// caller.
//
// Lines are formatted into per-shard byte buffers: a connection takes a
// shard when accepted (Log.Next) and appends its requests' lines there
// under the shard's mutex, which only the connections on that shard and the
// writer's periodic flush ever take. A full buffer is queued for the one
// writer goroutine and replaced by a free one; the writer drains the queue
// every 10 ms (woken earlier only when free buffers run low), so a hand-over
// costs no thread wakeup on the request path. The number of buffers is
// fixed: when the sink stalls (a full disk, a pipe nobody reads) the free
// list runs dry, and a line that finds neither room in its shard's buffer
// nor a free buffer is dropped and counted (Log.Dropped, published as
// simdedge_access_log_dropped_total), never waited for.
//
// The writer writes whole buffers holding whole lines, and reopens the file
// (Log.Reopen, SIGUSR1 for logrotate) between two writes, so a line is
// never split across the old and the new file.
//
// The formatting allocates nothing on a warm shard: the line is formatted
// straight into the shard's buffer once an upper bound of its length
// (lineBound: long fields are cut, see the max* constants) fits.
package accesslog
