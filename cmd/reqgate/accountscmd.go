package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/reqgate/reqgate/core/accounts"
)

const accountsUsage = `Usage:
  reqgate accounts check FILE...
      Check account files as --accounts would apply them (several files are merged by api_key), without a
      store and without hashing passwords. Prints every refusal, each as file:line: reason (at most 50), and
      exits 1 on any; prints the number of accounts and exits 0 when the files are valid.
`

// runAccountsCommand runs `reqgate accounts check FILE...`.
func runAccountsCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, accountsUsage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, accountsUsage)
		return 0
	case "check":
	default:
		fmt.Fprintf(stderr, "reqgate accounts: unknown subcommand %q\n\n%s", args[0], accountsUsage)
		return 2
	}
	var paths []string
args:
	for i, a := range args[1:] {
		switch {
		case a == "--": // the rest are files, also those whose name starts with "-"
			paths = append(paths, args[i+2:]...)
			break args
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprint(stdout, accountsUsage)
			return 0
		case strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(stderr, "reqgate accounts check: unknown option %q\n\n%s", a, accountsUsage)
			return 2
		}
		paths = append(paths, a)
	}
	if len(paths) == 0 {
		fmt.Fprintf(stderr, "reqgate accounts check: no FILE given\n\n%s", accountsUsage)
		return 2
	}
	n, err := accounts.CheckFiles(paths...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok, %d account(s)\n", strings.Join(paths, ", "), n)
	return 0
}
