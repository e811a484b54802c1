package upstream

// Outcome is how an attempt ended, as the engine saw it.
type Outcome uint8

const (
	// Response: a response head arrived; Result.Status says which.
	Response Outcome = iota
	// ConnectFailure: the connection could not be made (refused,
	// unreachable, connect timeout): nothing was sent.
	ConnectFailure
	// Reset: the connection failed or closed before a complete response
	// head (reset, EOF, write error).
	Reset
	// Timeout: the response head did not arrive in time (response_header
	// or try).
	Timeout
	// Canceled: the client went away or the total deadline passed while
	// waiting; it says nothing about the target.
	Canceled
)

func (o Outcome) String() string {
	switch o {
	case Response:
		return "response"
	case ConnectFailure:
		return "connect_failure"
	case Reset:
		return "reset"
	case Timeout:
		return "timeout"
	case Canceled:
		return "canceled"
	}
	return "unknown"
}

// Result is an attempt's outcome and, for Response, its status.
type Result struct {
	Outcome Outcome
	Status  int
}

// StatusResult is the Result of a response with status code.
func StatusResult(code int) Result { return Result{Outcome: Response, Status: code} }
