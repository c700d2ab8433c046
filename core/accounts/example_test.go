package accounts_test

import (
	"fmt"

	"github.com/reqgate/reqgate/core/accounts"
)

func ExampleParse() {
	p, err := accounts.Parse("acme.yaml", []byte(`accounts:
  - api_key: acme
    name: Acme
    users:
      - {id: 1, username: alice, password: s3cret}
    records:
      - {kind: re, id: 1, created_by: alice, fields: {field_101: Export to CSV, field_106: [3, 1]}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	a := p.Accounts[0]
	fmt.Println(a.APIKey, len(a.Fields["re"]), "re fields from the standard template")
	fmt.Printf("%q\n", a.Records[0].Values[106])

	_, err = accounts.Parse("acme.yaml", []byte("accounts:\n  - api_key: acme corp\n"))
	fmt.Println(err)
	// Output:
	// acme 6 re fields from the standard template
	// "1,3"
	// acme.yaml:2: api_key "acme corp" may hold only letters, digits, '-' and '_'
}
