package route

// cached are the classes whose GETs the gateway may cache, by name: the classes a per-route cache setting
// may name.
var cached = map[string]Class{
	string(Object): Object, string(Users): Users, string(User): User, string(Record): Record,
	string(Fields): Fields, string(Views): Views, string(View): View, string(ViewSearch): ViewSearch,
	string(Search): Search, string(Related): Related, string(History): History,
}

// CachedClass returns the class named name among those whose reads the gateway may cache.
func CachedClass(name string) (Class, bool) {
	c, ok := cached[name]
	return c, ok
}
