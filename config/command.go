package config

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// RunCommand runs `reqgate config ARGS...` and returns the exit code: `check FILE...` validates files without
// starting anything; `print [ROLE] [flags]` shows the effective configuration of a role (default serve) with
// secrets masked, after the same flags and environment as the role itself.
func RunCommand(args, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, commandUsage)
		return 2
	}
	switch args[0] {
	case "check":
		if len(args) < 2 {
			fmt.Fprint(stderr, commandUsage)
			return 2
		}
		code := 0
		for _, path := range args[1:] {
			if err := CheckFile(path); err != nil {
				fmt.Fprintln(stderr, err)
				code = 1
				continue
			}
			fmt.Fprintf(stdout, "%s: ok\n", path)
		}
		return code
	case "print":
		role, rest := RoleServe, args[1:]
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			role, rest = rest[0], rest[1:]
		}
		c, err := Load(role, rest, environ)
		if errors.Is(err, ErrHelp) {
			fmt.Fprint(stdout, Usage(role))
			return 0
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		for _, w := range c.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		if err := c.Print(stdout); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, commandUsage)
		return 0
	}
	fmt.Fprintf(stderr, "unknown config command %q\n%s", args[0], commandUsage)
	return 2
}

const commandUsage = `Usage:
  reqgate config check FILE...          validate config files without starting
  reqgate config print [ROLE] [flags]   show the effective configuration of ROLE (serve, core, gateway;
                                        default serve) with the same flags and REQGATE_* variables, secrets masked
`
