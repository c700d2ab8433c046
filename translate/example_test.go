package translate_test

import (
	"fmt"

	"github.com/reqgate/reqgate/translate"
)

func Example() {
	xml := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<users>
<user>
<user_id>5</user_id>
<email>alice@acme.test</email>
<username>alice</username>
<firstname>Alice</firstname>
<lastname>Archer &amp; Co</lastname>
<deleted />
<status>Active</status>
</user>
</users>`)
	js, err := translate.XMLToJSON(xml)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(js))

	body, err := translate.JSONToXML([]byte(`{"requirement":{"fields":{"field":[{"value":"02134","name":"field_107"}]}}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(body))

	_, err = translate.JSONToXML([]byte("{\"requirement\":\n  {\"fields\": }}"))
	fmt.Println(err)

	fmt.Println(translate.WantsJSON([]byte("application/xml;q=0.9, application/json")))
	fmt.Println(string(translate.ErrorJSON("Record not found")))
	// Output:
	// {"users":{"user":[{"user_id":5,"email":"alice@acme.test","username":"alice","firstname":"Alice","lastname":"Archer & Co","deleted":"","status":"Active"}]}}
	// <?xml version="1.0" encoding="UTF-8"?>
	// <requirement><fields><field><name>field_107</name><value>02134</value></field></fields></requirement>
	// invalid JSON at line 2, column 14: unexpected character '}', expected a value
	// true
	// {"error":{"message":"Record not found"}}
}
