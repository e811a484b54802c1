package main

// doc is what the code cannot say about a key: its table entry.
type doc struct {
	// Text describes the key (Markdown).
	Text string
	// Syntax replaces the value placeholder the kind gives ("HOST:PORT"
	// for STRING).
	Syntax string
	// Values are the only values the key accepts (an enum in the schema).
	Values []string
	// Range bounds an integer key, inclusive (minimum and maximum in the
	// schema); the zero value bounds nothing.
	Range [2]int64
	// Default replaces the default read from WithDefaults; "-" says the
	// key has none.
	Default string
	// Required: the parent section is refused without the key.
	Required bool
	// Reload says what a SIGHUP does with a change of the key; zero
	// takes the parent's.
	Reload reload
	// Example is a whole configuration (it must load) that shows the key;
	// keys without one are shown by their nearest ancestor's.
	Example string
}

// reload is what `kill -HUP` (a reload) does with a changed key.
type reload int

const (
	reloadInherit reload = iota
	// reloadYes: applied; connections accepted from then on (and, for
	// routes and upstreams, requests) get the new value.
	reloadYes
	// reloadNo: a reload that changes it is refused, naming the key; the
	// server keeps running the old configuration.
	reloadNo
	// reloadNewListener: refused for a listener that keeps its address;
	// a listener at a new address is opened with it.
	reloadNewListener
)

var reloadText = [...]string{
	reloadYes:         "yes",
	reloadNo:          "no: a reload that changes it is refused; restart to change it",
	reloadNewListener: "for new listeners only: refused on a listener that keeps its address; a listener at a new address opens with it",
}

// docs is the whole table, by key path.
func docs() map[string]doc {
	all := map[string]doc{}
	for _, t := range []map[string]doc{topDocs, listenerDocs, upstreamDocs, routeDocs, dynamicDocs} {
		for k, d := range t {
			all[k] = d
		}
	}
	return all
}
