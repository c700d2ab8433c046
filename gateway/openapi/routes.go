package openapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// Kind is a record kind of the interface as the paths name it.
type Kind struct {
	Segment    string // the path segment: re, ft, uc, or the template {api_prefix} of every custom object
	Root       string // the root element of a record: requirement, feature, use_case, custom_object
	Name       string // the kind in operation ids: Requirement, Feature, UseCase, CustomObject
	MinVersion int    // custom objects exist from version 2 on
}

// Kinds are the record kinds, in the order of docs/api.md.
var Kinds = []Kind{
	{"re", "requirement", "Requirement", 1},
	{"ft", "feature", "Feature", 1},
	{"uc", "use_case", "UseCase", 1},
	{"{api_prefix}", "custom_object", "CustomObject", 2},
}

// Operation is one entry of the route table: a method on a path of the interface under {base_url}.
//
// This table is the interface's list of routes for the OpenAPI document. The core routes by hand (core/api
// server.go and v2.go) and the gateway classifies paths (gateway/route); TestRouteTable checks every entry
// against both, on a real gateway in front of the real core, and checks that paths outside the table are 404,
// so the three cannot disagree unnoticed.
type Operation struct {
	Method string
	// Path follows {base_url}; "{kind}" stands for the segment of each record kind, which gives one route per
	// kind (with the kind's root elements for "{root}").
	Path       string
	Class      route.Class // the gateway's class of the path
	MinVersion int         // the first API version that has the route
	Gateway    bool        // answered by the gateway itself, never by the core
	Body       string      // root element of the request body, "" for none
	Status     int         // the status of success
	Result     []string    // root elements of the success body (any one of them); none for an empty body
	Errors     []int       // statuses of failure beyond those of every route (commonErrors)
	Summary    string
	Doc        string // the description: what the summary leaves out
}

// commonErrors are the failures any route of the API may answer: a malformed target or body (400), missing
// or wrong credentials (401), a resource that does not exist (404), rate limits (429, or 503 where the
// operator chose the mirrored service's status), and failures of the core or of the way to it.
var commonErrors = []int{400, 401, 404, 429, 500, 502, 503, 504}

// conditionalDoc describes the conditional writes of a record.
const conditionalDoc = "With If-Match (the ETag of a read of the record, in any representation, through any gateway) the write " +
	"is applied only if the record still has that representation, decided in the core's write transaction: 412 when it " +
	"changed since, or when the record is missing or deleted (also for If-Match: *). A weak tag (W/) never matches. " +
	"If-Unmodified-Since is 412 when last_updated_time is later, and is ignored with If-Match."

// writeErrors are the further failures of a request with a body.
var writeErrors = []int{413, 415, 422}

// Table is the route table of the interface.
var Table = []Operation{
	{Method: "GET", Path: "/object", Class: route.Object, MinVersion: 2, Status: 200, Result: []string{"objects"},
		Summary: "List the objects (record kinds) of the account",
		Doc:     "The built-in kinds re, ft and uc (custom_object No) and every custom object (custom_object Yes), whose api_prefix is the path segment of its records."},
	{Method: "GET", Path: "/user", Class: route.Users, MinVersion: 1, Status: 200, Result: []string{"users"},
		Summary: "List every user of the account"},
	{Method: "GET", Path: "/user/{id_or_email}", Class: route.User, MinVersion: 1, Status: 200, Result: []string{"user", "users"},
		Summary: "Read one user by id, or the users of one email address",
		Doc:     "An integer selects a user by id (root user); an email address selects every user with that address (root users, one or more; 404 when none)."},
	{Method: "GET", Path: "/rate_throttle_status", Class: route.Throttle, MinVersion: 1, Gateway: true, Status: 200,
		Result: []string{"rate_throttle_status"}, Summary: "Report whether the caller is throttled, without counting as a call"},
	{Method: "POST", Path: "/{kind}", Class: route.Collection, MinVersion: 1, Body: "{root}", Status: 201,
		Errors: writeErrors, Summary: "Create a record",
		Doc: "The authenticated user is the creator. Location names the new record, under the API version of the request."},
	{Method: "GET", Path: "/{kind}/{id}", Class: route.Record, MinVersion: 1, Status: 200, Result: []string{"{root}"},
		Summary: "Read a record", Doc: "404 for a record that does not exist or was deleted."},
	{Method: "PUT", Path: "/{kind}/{id}", Class: route.Record, MinVersion: 1, Body: "{root}", Status: 200,
		Errors: append([]int{412}, writeErrors...), Summary: "Update a record",
		Doc: "Only the fields sent change. 404 for a record that does not exist or was deleted. " + conditionalDoc},
	{Method: "DELETE", Path: "/{kind}/{id}", Class: route.Record, MinVersion: 1, Status: 200, Errors: []int{409, 412, 422},
		Summary: "Delete a record", Doc: "A soft delete: search finds it by deleted_time. 409 when it is already deleted. " + conditionalDoc},
	{Method: "GET", Path: "/{kind}/field", Class: route.Fields, MinVersion: 1, Status: 200, Result: []string{"{root}_fields"},
		Summary: "List the field definitions of the kind"},
	{Method: "GET", Path: "/{kind}/view", Class: route.Views, MinVersion: 2, Status: 200, Result: []string{"views"},
		Summary: "List the views (saved lists of records) of the kind"},
	{Method: "GET", Path: "/{kind}/view/{view_id}", Class: route.View, MinVersion: 2, Status: 200, Result: []string{"view"},
		Summary: "Read the record summaries of a view"},
	{Method: "GET", Path: "/{kind}/view/{view_id}/search", Class: route.ViewSearch, MinVersion: 2, Status: 200,
		Result: []string{"view"}, Summary: "Search the records of a view"},
	{Method: "GET", Path: "/{kind}/search", Class: route.Search, MinVersion: 2, Status: 200, Result: []string{"search_results"},
		Summary: "Search the records of the kind"},
	{Method: "GET", Path: "/{kind}/{id}/related", Class: route.Related, MinVersion: 2, Status: 200,
		Result: []string{"relationships"}, Summary: "List the records related to a record"},
	{Method: "GET", Path: "/{kind}/{id}/fieldhistory/{field_id}", Class: route.History, MinVersion: 2, Status: 200,
		Result: []string{"history_items"}, Summary: "Read the change history of one field of a record"},
}

// Versions are the API versions: /api/{api_key} is version 1, /api2/{api_key} version 2.
var Versions = []int{1, 2}

// Base is the path of {base_url} in version v, with the {api_key} template.
func Base(v int) string {
	if v == 1 {
		return "/api/{api_key}"
	}
	return "/api" + strconv.Itoa(v) + "/{api_key}"
}

// Route is an Operation made concrete: one version, one kind.
type Route struct {
	Operation
	Version     int
	Kind        *Kind  // nil for a route of no kind
	Template    string // the whole path template, e.g. /api2/{api_key}/re/{id}
	OperationID string // e.g. v2GetRequirement
	Body        string // root element of the request body, "" for none
	Result      []string
}

// Routes expands the table: every operation in every version that has it, for every kind it applies to.
func Routes() []Route {
	var rs []Route
	for _, v := range Versions {
		for _, op := range Table {
			if v < op.MinVersion {
				continue
			}
			if !strings.Contains(op.Path, "{kind}") {
				rs = append(rs, concrete(op, v, nil))
				continue
			}
			for i := range Kinds {
				if v >= Kinds[i].MinVersion {
					rs = append(rs, concrete(op, v, &Kinds[i]))
				}
			}
		}
	}
	return rs
}

func concrete(op Operation, v int, k *Kind) Route {
	r := Route{Operation: op, Version: v, Kind: k, Body: op.Body}
	path := op.Path
	if k != nil {
		path = strings.ReplaceAll(path, "{kind}", k.Segment)
		r.Body = strings.ReplaceAll(r.Body, "{root}", k.Root)
		for _, res := range op.Result {
			r.Result = append(r.Result, strings.ReplaceAll(res, "{root}", k.Root))
		}
	} else {
		r.Result = op.Result
	}
	r.Template = Base(v) + path
	r.OperationID = "v" + strconv.Itoa(v) + operationName(op, k)
	return r
}

// operationName names an operation after its method and path: GetRequirement, CreateFeature,
// SearchUseCaseView, GetCustomObjectFieldHistory.
func operationName(op Operation, k *Kind) string {
	name, ok := operationNames[op.Class]
	if !ok {
		panic("openapi: no operation name for class " + string(op.Class))
	}
	kind := ""
	if k != nil {
		kind = k.Name
	}
	return strings.NewReplacer("{verb}", verb(op.Method), "{kind}", kind).Replace(name)
}

// operationNames are the operation names of the classes, with the operation's verb for "{verb}" and the
// kind's name for "{kind}".
var operationNames = map[route.Class]string{
	route.Object:     "GetObjects",
	route.Users:      "GetUsers",
	route.User:       "GetUser",
	route.Throttle:   "GetRateThrottleStatus",
	route.Collection: "Create{kind}",
	route.Record:     "{verb}{kind}",
	route.Fields:     "Get{kind}Fields",
	route.Views:      "Get{kind}Views",
	route.View:       "Get{kind}View",
	route.ViewSearch: "Search{kind}View",
	route.Search:     "Search{kind}",
	route.Related:    "Get{kind}Related",
	route.History:    "Get{kind}FieldHistory",
}

// verb is what a method does to a record: Update, Delete, or Get.
func verb(method string) string {
	switch method {
	case http.MethodPut:
		return "Update"
	case http.MethodDelete:
		return "Delete"
	}
	return "Get"
}
