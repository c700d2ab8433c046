package core

import "strconv"

// AssignUserIDs decides the id of every user of an account file, for both stores: users the file gives an
// id keep it; then, in file order, a user without one keeps its stored id (matched by username) or takes
// the highest id so far plus one, so an assigned id never takes one the file names. An id that another
// username holds, a negative id and a missing username are refused as a *ValidationError.
//
// stored is the account's users as stored (id -> username). upsert is called for each user, in the order
// above, with its id; the result is every user's id by username, the stored ones included.
func AssignUserIDs(stored map[int64]string, specs []UserSpec, upsert func(u User, id int64) error) (map[string]int64, error) {
	byID := make(map[int64]string, len(stored))
	byName := make(map[string]int64, len(stored)+len(specs))
	for id, name := range stored {
		byID[id], byName[name] = name, id
	}
	for _, withID := range []bool{true, false} {
		for _, u := range specs {
			if (u.ID != 0) != withID {
				continue
			}
			if u.Username == "" {
				return nil, Invalid("users", "a user has no username")
			}
			id := u.ID
			if id < 0 {
				return nil, Invalid("users."+u.Username, "id must be positive")
			}
			if id == 0 {
				if cur, ok := byName[u.Username]; ok {
					id = cur
				} else {
					for n := range byID {
						id = max(id, n)
					}
					id++
				}
			}
			if other, ok := byID[id]; ok && other != u.Username {
				return nil, Invalid("users."+u.Username, "id "+strconv.FormatInt(id, 10)+" belongs to "+other)
			}
			if err := upsert(u.User, id); err != nil {
				return nil, err
			}
			if cur, ok := byName[u.Username]; ok {
				delete(byID, cur)
			}
			byName[u.Username], byID[id] = id, u.Username
		}
	}
	return byName, nil
}
