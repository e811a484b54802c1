package main

import (
	"fmt"
	"io"

	"github.com/simdedge/simdedge/server/admin"
	"github.com/simdedge/simdedge/server/config"
)

const checkSynopsis = `usage: simdedge check [-config FILE | FILE] [-redact] [-q]

Validates FILE (default: the built-in configuration) as serve would load it:
the YAML, every key, the references between routes, upstreams and handlers,
and the TLS files. Standard output gets the effective configuration (every
default filled in; a loadable file), standard error a one-line verdict:

  simdedge check: FILE is valid (2 listeners, 5 routes, 1 upstream)

or the errors, one a line, each with its line number. Exit status 0 when the
file is valid, 1 when it is not, 2 for a command-line mistake.

`

// runCheck validates a configuration, prints its effective form on stdout
// and a verdict line on stderr. The verdict goes to stderr so that stdout
// stays a configuration file (`simdedge check a.yaml > effective.yaml`).
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", stderr)
	file := fs.String("config", "", "YAML configuration `FILE` (default: the built-in configuration)")
	// check prints secrets in clear by default: whoever runs it can read
	// the file it loads, and the output is a loadable configuration;
	// -redact prints what the admin /config shows, for a ticket or a CI log.
	redact := fs.Bool("redact", false, "hide secrets as the admin /config does")
	quiet := fs.Bool("q", false, "print only the verdict, not the effective configuration")
	if err := parseConfigArgs(fs, args, file); err != nil {
		return argsFailed(err, fs, checkSynopsis, stdout, stderr)
	}
	cfg, err := validateConfig(*file, stderr)
	if err != nil {
		printConfigError(stderr, err)
		return 1
	}
	out, err := cfg.WithDefaults().YAML()
	if err == nil && *redact {
		out, err = admin.Redact(out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simdedge: %v\n", err)
		return 1
	}
	if !*quiet {
		stdout.Write(out)
	}
	more := ""
	if x := cfg.XDS(); x != nil {
		// Only the static part is checked here; the rest arrives at run
		// time and is checked as it arrives.
		more = "; more from the control plane at " + x.Server
	}
	fmt.Fprintf(stderr, "simdedge check: %s is valid (%s%s)\n", configName(*file), configSummary(cfg), more)
	return 0
}

// validateConfig loads and checks a configuration as serve would (check,
// and reload before it signals); warnings go to w.
func validateConfig(file string, w io.Writer) (*config.Config, error) {
	cfg, err := loadConfig(file)
	if err != nil {
		return nil, err
	}
	// dynamic.xds needs a fleet build, and its TLS files (fleet.go).
	if err := checkFleet(cfg); err != nil {
		return nil, err
	}
	// Build too, so that references a parse cannot see (handlers,
	// builtins) are checked; the builtin demo needs no running server.
	builtins := map[string][]string{}
	for _, u := range cfg.Upstreams {
		if u.Builtin == demoBuiltin {
			builtins[demoBuiltin] = []string{"127.0.0.1:1"}
		}
	}
	snap, err := cfg.Build(config.BuildOptions{Builtins: builtins, Schemes: targetSchemes, NoDiscovery: true})
	if err != nil {
		return nil, err
	}
	snap.Close()
	if err := checkTLS(cfg, w); err != nil {
		return nil, err
	}
	return cfg, nil
}

// configSummary counts what a configuration serves, for the verdict of
// check and reload: "2 listeners, 5 routes, 1 upstream".
func configSummary(cfg *config.Config) string {
	return plural(len(cfg.EffectiveListeners()), "listener") + ", " +
		plural(len(cfg.Routes), "route") + ", " + plural(len(cfg.Upstreams), "upstream")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
