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
		paths, help, err := checkArgs(args[1:])
		switch {
		case help:
			fmt.Fprint(stdout, checkUsage)
			return 0
		case err != nil:
			fmt.Fprintf(stderr, "reqgate config check: %v\n\n%s", err, checkUsage)
			return 2
		}
		code := 0
		for _, path := range paths {
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

// checkArgs reads the arguments of `config check`: file paths, or -h/--help. Any other argument starting with
// "-" is refused instead of being read as a file name; "--" ends the options, for a file whose name starts
// with "-".
func checkArgs(args []string) (paths []string, help bool, err error) {
	for i, a := range args {
		switch {
		case a == "--":
			paths = append(paths, args[i+1:]...)
			return checkPaths(paths)
		case a == "-h" || a == "-help" || a == "--help":
			return nil, true, nil
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, false, fmt.Errorf("unknown option %q", a)
		}
		paths = append(paths, a)
	}
	return checkPaths(paths)
}

func checkPaths(paths []string) ([]string, bool, error) {
	if len(paths) == 0 {
		return nil, false, errors.New("no FILE given")
	}
	return paths, false, nil
}

const checkUsage = `Usage: reqgate config check FILE...

Validates config files without starting anything: YAML syntax, unknown keys, bad values and the rules that
span keys, against the defaults. Every refusal of a file is printed, each naming the file, the line and the
key. Exits 0 when every file is valid, 1 otherwise.
`

const commandUsage = `Usage:
  reqgate config check FILE...          validate config files without starting
  reqgate config print [ROLE] [flags]   show the effective configuration of ROLE (serve, core, gateway;
                                        default serve) with the same flags and REQGATE_* variables, secrets masked
`
