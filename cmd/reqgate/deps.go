package main

// Blank imports pin the project's chosen dependencies until the code that uses them lands.
import (
	_ "github.com/VictoriaMetrics/metrics"
	_ "github.com/clbanning/mxj/v2"
	_ "github.com/dgraph-io/ristretto/v2"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/redis/go-redis/v9"
	_ "github.com/valyala/fasthttp"
	_ "golang.org/x/crypto/bcrypt"
	_ "golang.org/x/sync/singleflight"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)
