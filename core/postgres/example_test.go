package postgres_test

import (
	"context"
	"fmt"
	"log"

	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/postgres"
)

// Open migrates the database (under an advisory lock, so replicas may start together) and returns a
// core.Store; every replica opens its own.
func ExampleOpen() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, "postgres://reqgate:secret@db.internal:5432/reqgate?sslmode=require&pool_max_conns=32")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := st.Apply(ctx, accounts.Demo()); err != nil {
		log.Fatal(err)
	}
	acct, err := st.Account(ctx, "demo")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(acct.Name)
}
