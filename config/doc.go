// Package config reads reqgate's settings from flags, REQGATE_* environment variables and the YAML file given
// with --config, in that order of precedence (a flag beats the environment, the environment beats the file, the
// file beats the defaults), and refuses bad input at start with the key's path, the reason and where the value
// came from (flag, environment variable, or file:line).
//
// The package imports nothing of the project but packages under internal/ (the YAML walker, which core/accounts
// shares, the Redis namespace rule, the route table's classes): it returns plain, resolved types (Config, Policy,
// Override) that the packages it configures map to their options (gateway.OptionsFrom, ratelimit.OptionsFrom,
// api.OptionsFrom), so they may import it and it none of them. Default is the only place a default value is
// written; the packages take complete values and refuse impossible ones.
//
// Every scalar key of the file can also be given as an environment variable named REQGATE_ followed by its path
// in upper case with dots as underscores (cache.ttl is REQGATE_CACHE_TTL), or as a flag with --set path=value.
// List keys (accounts, cors.allowed_origins) take a comma-separated list there. The rate-limit policies and
// overrides exist only in the file.
package config
