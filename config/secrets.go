package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
)

// maxSecretBytes bounds a secret file: a token or a password, never a file named by mistake read whole.
const maxSecretBytes = 4096

// ReadSecret reads the secret a file holds (admin.token_file, redis.password_file, store.password_file): its
// content less the white space around it, such as the newline `echo` leaves. An empty secret, one with a line
// break or other white space inside, or a file larger than 4 KiB is refused; the error never holds the secret.
func ReadSecret(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("%s: larger than %d bytes", path, maxSecretBytes)
	}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return "", fmt.Errorf("%s: empty", path)
	case bytes.ContainsAny(b, " \t\r\n\v\f"):
		return "", fmt.Errorf("%s: white space inside the secret", path)
	case bytes.ContainsFunc(b, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", fmt.Errorf("%s: a control character in the secret", path)
	}
	return string(b), nil
}

// secrets checks the secret files: readable and well formed, and a password file only where a URL can take
// its password and names none already (two sources of one password would leave it unclear which is in force).
func (k *checker) secrets() {
	c := k.c
	if c.Admin.TokenFile != "" {
		if _, err := ReadSecret(c.Admin.TokenFile); err != nil {
			k.fail("admin.token_file", "%v", err)
		}
	}
	if f := c.Redis.PasswordFile; f != "" {
		if c.Redis.URL != "" || !c.Redis.Configured() {
			k.passwordFile("redis.password_file", f, "redis.url", c.Redis.URL)
		} else if _, err := ReadSecret(f); err != nil {
			k.fail("redis.password_file", "%v", err)
		}
	}
	if f := c.Redis.Sentinel.PasswordFile; f != "" {
		if len(c.Redis.Sentinel.Addrs) == 0 {
			k.fail("redis.sentinel.password_file", "needs redis.sentinel.addrs")
		} else if _, err := ReadSecret(f); err != nil {
			k.fail("redis.sentinel.password_file", "%v", err)
		}
	}
	if f := c.Store.PasswordFile; f != "" {
		if !isPostgres(c.DB) {
			k.fail("store.password_file", "only for a postgres:// db; the SQLite store has no password")
			return
		}
		k.passwordFile("store.password_file", f, "db", c.DB)
	}
}

func (k *checker) passwordFile(path, file, urlPath, rawURL string) {
	if rawURL == "" {
		k.fail(path, "needs %s", urlPath)
		return
	}
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			k.fail(path, "%s names a password already; leave it out of the URL", urlPath)
			return
		}
	}
	if _, err := ReadSecret(file); err != nil {
		k.fail(path, "%v", err)
	}
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// RedisURL is redis.url with the password of redis.password_file put in, read from the file now.
func (c *Config) RedisURL() (string, error) {
	return withPassword(c.Redis.URL, c.Redis.PasswordFile)
}

// StoreDSN is db with the password of store.password_file put in, read from the file now.
func (c *Config) StoreDSN() (string, error) {
	return withPassword(c.DB, c.Store.PasswordFile)
}

// withPassword puts the secret of file into the userinfo of rawURL, keeping its user name.
func withPassword(rawURL, file string) (string, error) {
	if file == "" || rawURL == "" {
		return rawURL, nil
	}
	pw, err := ReadSecret(file)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", errors.New("bad URL: " + urlReason(err).Error())
	}
	user := ""
	if u.User != nil {
		user = u.User.Username()
	}
	u.User = url.UserPassword(user, pw)
	return u.String(), nil
}

// Redact hides the passwords in s, one command-line argument or value: the userinfo password of any URL in
// it and any password= parameter, as Print masks them.
func Redact(s string) string { return mask(s) }
