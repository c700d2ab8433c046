package testsupport

// TwoAccounts is an account file (coretest.Options.AccountsYAML) of two organisations, for tests of the
// isolation between accounts: acme (users alice and bob, a record re 1 whose title is "Acme secret plan") and
// globex (user gina, a record re 1 "Globex plan"). Each password is the user's name with "-secret".
const TwoAccounts = `accounts:
  - api_key: acme
    name: Acme
    users:
      - {username: alice, password: alice-secret, email: alice@acme.test, firstname: Alice, lastname: Archer}
      - {username: bob, password: bob-secret, email: bob@acme.test, firstname: Bob, lastname: Baker}
    records:
      - {kind: re, id: 1, created_by: alice, fields: {field_101: Acme secret plan}}
  - api_key: globex
    name: Globex
    users:
      - {username: gina, password: gina-secret, email: gina@globex.test, firstname: Gina, lastname: Globex}
    records:
      - {kind: re, id: 1, created_by: gina, fields: {field_101: Globex plan}}
`
