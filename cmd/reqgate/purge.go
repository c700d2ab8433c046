package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/internal/wire"
)

// accountKnower is a part that knows which accounts exist: the core, from its store. A gateway alone does not
// (the core answers 401 alike for an unknown account and a wrong password, so as not to tell which accounts
// exist), so in the gateway role every purge of a possible api_key is applied.
type accountKnower interface {
	knowsAccount(ctx context.Context, apiKey string) (bool, error)
}

// knowsAccount reports whether the store holds the account: every account of the account files applied, the
// demo account, and any account an earlier start applied (the core serves those too, so they can be purged).
func (n *coreNode) knowsAccount(ctx context.Context, apiKey string) (bool, error) {
	n.mu.Lock()
	st := n.store
	n.mu.Unlock()
	if st == nil {
		return false, errors.New("core: store not open")
	}
	_, err := st.Account(ctx, apiKey)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, core.ErrNotFound):
		return false, nil
	}
	return false, err
}

// servePurge is POST /purge?account=API_KEY: the account's cached reads and remembered credentials dropped by
// every part of the process (and, over Redis, by the other gateway replicas). An account that cannot exist (not
// an api_key's form) or that the core's store does not hold is answered 404, without purging; a store that
// cannot say is 503. Every purge and refusal is logged with who asked: the remote address and the endpoint.
func servePurge(parts func() []part, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		account := req.URL.Query().Get("account")
		if account == "" {
			http.Error(w, "purge: name the account: POST /purge?account=API_KEY", http.StatusBadRequest)
			return
		}
		who := []any{"account", account, "endpoint", "POST /purge", "remote", req.RemoteAddr}
		known := wire.ValidAPIKey(account)
		for _, p := range parts() {
			k, ok := p.(accountKnower)
			if !ok || !known {
				continue
			}
			var err error
			if known, err = k.knowsAccount(req.Context(), account); err != nil {
				log.Warn("purge refused: the store cannot say whether the account exists", append(who, "err", err)...)
				w.Header().Set("Retry-After", "1")
				http.Error(w, "purge: the store cannot be read; try again", http.StatusServiceUnavailable)
				return
			}
		}
		if !known {
			log.Info("purge refused: unknown account", who...)
			http.Error(w, fmt.Sprintf("purge: no account %q", account), http.StatusNotFound)
			return
		}
		n := 0
		for _, p := range parts() {
			if pp, ok := p.(purger); ok {
				pp.purge(account)
				n++
			}
		}
		log.Info("account purged", append(who, "parts", n)...)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "purged account %q in %d part(s) of this process; gateway replicas sharing its Redis purge it too\n", account, n)
	}
}
