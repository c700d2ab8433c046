package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// ErrHelp is returned by Load when the arguments ask for help (-h, --help); print Usage(role) and exit 0.
var ErrHelp = flag.ErrHelp

// envConfig names the config file in the environment, like --config.
const envConfig = "REQGATE_CONFIG"

// flagValue is one flag occurrence, kept in order until the file and the environment have been applied.
type flagValue struct {
	name  string // "listen", or "set" for --set
	value string
}

// Load builds the configuration of role from its defaults, the --config file, the REQGATE_* variables of
// environ and the flags in args (the arguments after the role), in rising order of precedence, and validates it.
// Every refusal is returned, joined; each is an *Error naming its source, key path and reason. -h or --help
// returns ErrHelp.
func Load(role string, args []string, environ []string) (*Config, error) {
	if !contains(allRoles, role) {
		return nil, &Error{Path: "role", Reason: fmt.Sprintf("unknown role %q: want serve, core or gateway", role)}
	}
	c := Default(role)
	fs, flags := newFlagSet(role)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, &Error{Source: "flags", Reason: err.Error() + " (see --help)"}
	}
	if fs.NArg() > 0 {
		return nil, &Error{Source: "flags", Reason: fmt.Sprintf("unexpected argument %q (see --help)", fs.Arg(0))}
	}
	env := environMap(environ)

	var errs []error
	// The file first: the flag beats the environment in naming it too.
	switch file := lastFlag(*flags, "config"); {
	case file != nil:
		c.ConfigFile = file.value
	case env[envConfig] != "":
		c.ConfigFile = env[envConfig]
	}
	if c.ConfigFile != "" {
		data, err := readFile(c.ConfigFile)
		if err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, c.applyFile(c.ConfigFile, data)...)
		}
	}
	errs = append(errs, c.applyEnv(env)...)
	errs = append(errs, c.applyFlags(*flags)...)
	c.derive()
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

func lastFlag(fv []flagValue, name string) *flagValue {
	for i := len(fv) - 1; i >= 0; i-- {
		if fv[i].name == name {
			return &fv[i]
		}
	}
	return nil
}

// environMap reads KEY=VALUE pairs; an empty value counts as unset (a Kubernetes secret key may be empty).
func environMap(environ []string) map[string]string {
	m := make(map[string]string)
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, "REQGATE_") && v != "" {
			m[k] = v
		}
	}
	return m
}

// applyEnv sets every setting named by a REQGATE_* variable. Two names of one setting (REQGATE_REDIS and
// REQGATE_REDIS_URL) must agree. Unknown REQGATE_* names become warnings, not refusals: Kubernetes adds
// REQGATE_*_SERVICE_HOST and friends for a service named reqgate-*.
func (c *Config) applyEnv(env map[string]string) []error {
	var errs []error
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		if name != envConfig && settingByEnv[name] == nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("unknown environment variable %s ignored", name))
		}
	}
	for _, s := range settings {
		var used string
		for _, name := range s.env {
			v, ok := env[name]
			if !ok {
				continue
			}
			if used != "" {
				if env[used] != v {
					errs = append(errs, &Error{Source: "env " + name, Path: s.path, Reason: "disagrees with " + used})
					c.markBad(s.path)
				}
				continue
			}
			used = name
			if err := s.set(c, v); err != nil {
				errs = append(errs, &Error{Source: "env " + name, Path: s.path, Reason: err.Error()})
				c.markBad(s.path)
				continue
			}
			c.setSource(s.path, "env "+name)
		}
	}
	return errs
}

// applyFlags applies the flags in the order given, so a later one wins; --accounts accumulates.
func (c *Config) applyFlags(fv []flagValue) []error {
	var errs []error
	accounts := false
	for _, f := range fv {
		switch f.name {
		case "config":
			continue
		case "set":
			key, val, ok := strings.Cut(f.value, "=")
			key = strings.TrimSpace(key)
			src := "flag --set " + key
			s := settingByPath[key]
			switch {
			case !ok:
				errs = append(errs, &Error{Source: "flag --set", Reason: fmt.Sprintf("%q: want key=value, e.g. cache.ttl=10s", f.value)})
			case s == nil:
				errs = append(errs, &Error{Source: src, Path: key, Reason: "unknown key" + suggestFrom(key, settingPaths())})
			default:
				if err := s.set(c, val); err != nil {
					errs = append(errs, &Error{Source: src, Path: key, Reason: err.Error()})
					c.markBad(key)
					continue
				}
				c.setSource(key, src)
			}
		case "accounts":
			if !accounts {
				c.Accounts = nil // flags replace the environment's and the file's list
				accounts = true
			}
			c.Accounts = append(c.Accounts, f.value)
			c.setSource("accounts", "flag --accounts")
		default:
			s := settingByFlag(f.name)
			if err := s.set(c, f.value); err != nil {
				errs = append(errs, &Error{Source: "flag --" + f.name, Path: s.path, Reason: err.Error()})
				c.markBad(s.path)
				continue
			}
			c.setSource(s.path, "flag --"+f.name)
		}
	}
	return errs
}

func settingByFlag(name string) *setting {
	for _, s := range settings {
		if s.flag == name {
			return s
		}
	}
	return nil
}

func settingPaths() []string {
	out := make([]string, len(settings))
	for i, s := range settings {
		out[i] = s.path
	}
	return out
}

// newFlagSet defines the flags of role. Every flag is recorded as given, in order, and applied after the file and
// the environment.
func newFlagSet(role string) (*flag.FlagSet, *[]flagValue) {
	fs := flag.NewFlagSet("reqgate "+role, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var fv []flagValue
	record := func(name string) func(string) error {
		return func(v string) error {
			fv = append(fv, flagValue{name: name, value: v})
			return nil
		}
	}
	for _, s := range settings {
		if s.flag != "" && contains(s.roles, role) {
			fs.Func(s.flag, s.help, record(s.flag))
		}
	}
	fs.Func("config", "YAML `FILE` with every other setting (rate policies, cache, timeouts, CORS)", record("config"))
	fs.Func("set", "`KEY=VALUE`: set any key of the config file, e.g. --set cache.ttl=10s; repeatable", record("set"))
	return fs, &fv
}

// Usage is the --help text of a role: its flags with defaults and environment variables, and the keys --set
// and REQGATE_* accept.
func Usage(role string) string {
	var b strings.Builder
	def := Default(role)
	fmt.Fprintf(&b, "Usage: reqgate %s [flags]\n\n", role)
	switch role {
	case RoleServe:
		b.WriteString("Runs the core service and the gateway in front of it in one process.\n")
	case RoleCore:
		b.WriteString("Runs the core service (the XML REST interface) alone, with its store.\n")
	case RoleGateway:
		b.WriteString("Runs the gateway alone, in front of an upstream core (--upstream).\n")
	}
	b.WriteString("Precedence: flag > REQGATE_* environment variable > --config file > default.\n\nFlags:\n")
	fs, _ := newFlagSet(role)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s %s\n    \t%s\n", f.Name, name, usage)
		if s := settingByFlag(f.Name); s != nil {
			if d := s.format(def); d != "" {
				fmt.Fprintf(&b, "    \tdefault %s\n", d)
			}
			fmt.Fprintf(&b, "    \tenvironment %s\n", strings.Join(s.env, " or "))
		} else if f.Name == "config" {
			fmt.Fprintf(&b, "    \tenvironment %s\n", envConfig)
		}
	})
	b.WriteString("\nKeys for --set KEY=VALUE, the environment (REQGATE_ + key in upper case, dots as underscores)\n" +
		"and the config file (lists: comma-separated; rate-limit policies and overrides: file only):\n")
	for _, s := range settings {
		if s.flag != "" {
			continue
		}
		fmt.Fprintf(&b, "  %-26s %-8s default %-10s %s\n", s.path, s.kindName(), orNone(s.format(def)), s.help)
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
