package accounts

import (
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// BcryptCost is the bcrypt cost of the password hashes Parse makes. Tests lower it (bcrypt.MinCost) to stay
// fast; production keeps the default.
var BcryptCost = bcrypt.DefaultCost

// hashPasswords fills every user's PasswordHash. bcrypt is slow on purpose, so the users are hashed on all
// CPUs at once.
func hashPasswords(accts []*account) error {
	type job struct {
		hash *[]byte
		pw   string
	}
	var jobs []job
	for _, a := range accts {
		for i := range a.spec.Users {
			jobs = append(jobs, job{&a.spec.Users[i].PasswordHash, a.passwords[i]})
		}
	}
	cost := BcryptCost
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	next := make(chan job)
	errs := make(chan error, len(jobs))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range next {
				h, err := bcrypt.GenerateFromPassword([]byte(j.pw), cost)
				if err != nil {
					errs <- fmt.Errorf("hash password: %w", err)
					continue
				}
				*j.hash = h
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}
