package translate

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

// TestXMLToJSONMapping covers the rules of the mapping one at a time.
func TestXMLToJSONMapping(t *testing.T) {
	tests := []struct {
		name, xml, want string
	}{
		{"integer", "<user><user_id>42</user_id></user>", `{"user":{"user_id":42}}`},
		{"negative integer", "<error><try_again_after>-5</try_again_after></error>", `{"error":{"try_again_after":-5}}`},
		{"leading zeros stay text", "<user><user_id>007</user_id></user>", `{"user":{"user_id":"007"}}`},
		{"minus zero stays text", "<user><user_id>-0</user_id></user>", `{"user":{"user_id":"-0"}}`},
		{"plus sign stays text", "<user><user_id>+5</user_id></user>", `{"user":{"user_id":"+5"}}`},
		{"spaces stay text", "<user><user_id> 5</user_id></user>", `{"user":{"user_id":" 5"}}`},
		{"largest exact integer", "<user><user_id>9007199254740991</user_id></user>", `{"user":{"user_id":9007199254740991}}`},
		{"beyond exact integers stays text", "<user><user_id>9007199254740992</user_id></user>",
			`{"user":{"user_id":"9007199254740992"}}`},
		{"empty integer element is null", "<field><name>id</name><sort/></field>", `{"field":{"name":"id","sort":null}}`},
		{"empty option value is null", "<option><value/><label>{{USERS}}</label></option>", `{"option":{"value":null,"label":"{{USERS}}"}}`},
		{"empty integer attribute is null", `<value id="">x</value>`, `{"value":{"@id":null,"#text":"x"}}`},
		{"empty picklist value is null", "<field><name>f</name><value/><list_type>normal</list_type></field>",
			`{"field":{"name":"f","value":null,"list_type":"normal"}}`},
		{"empty text value stays text", "<field><name>f</name><value/></field>", `{"field":{"name":"f","value":""}}`},
		{"empty textarea value stays text", "<field><name>f</name><value><![CDATA[]]></value><value_plaintext/></field>",
			`{"field":{"name":"f","value":"","value_plaintext":""}}`},
		{"empty history values are null", "<history><old_value/><new_value><![CDATA[]]></new_value></history>",
			`{"history":{"old_value":null,"new_value":null}}`},
		{"a default value stays text", "<field><type>Picklist-Pick One</type><default_value/><max_size/><list_type>user</list_type></field>",
			`{"field":{"type":"Picklist-Pick One","default_value":"","max_size":null,"list_type":"user"}}`},
		{"field value stays text", "<field><name>x</name><value>2134</value></field>", `{"field":{"name":"x","value":"2134"}}`},
		{"option value is an integer", "<option><value>3</value><label>x</label></option>", `{"option":{"value":3,"label":"x"}}`},
		{"integer attribute", `<value id="3" email="a@b.c">x</value>`, `{"value":{"@id":3,"@email":"a@b.c","#text":"x"}}`},
		{"attribute order is the interface's", `<value email="a@b.c" extra="1" id="3">x</value>`,
			`{"value":{"@id":3,"@email":"a@b.c","@extra":"1","#text":"x"}}`},
		{"empty text with attributes", `<value id="3"/>`, `{"value":{"@id":3,"#text":""}}`},
		{"child order is the interface's", "<user><status>Active</status><user_id>1</user_id><zz>z</zz><email>e</email></user>",
			`{"user":{"user_id":1,"email":"e","status":"Active","zz":"z"}}`},
		{"always-array with one item", "<users><user><user_id>1</user_id></user></users>", `{"users":{"user":[{"user_id":1}]}}`},
		{"always-array with none", "<fields/>", `{"fields":{"field":[]}}`},
		{"unknown repeated element", "<x><y>1</y><y>2</y></x>", `{"x":{"y":["1","2"]}}`},
		{"unknown single element", "<x><y>1</y></x>", `{"x":{"y":"1"}}`},
		{"repeated names are grouped", "<x><a>1</a><b/><a>2</a></x>", `{"x":{"a":["1","2"],"b":""}}`},
		{"a repeated single element keeps every item", "<user><email>a</email><email>b</email></user>",
			`{"user":{"email":["a","b"]}}`},
		{"leaf white space is data", "<x><y>  a \n b  </y><z> </z></x>", `{"x":{"y":"  a \n b  ","z":" "}}`},
		{"container white space is layout", "<history_items>\n  \n</history_items>", `{"history_items":{"history":[]}}`},
		{"container with text keeps it", "<users>someone</users>", `{"users":"someone"}`},
		{"white space between children is layout", "<x>\n <a>1</a>\n <b>2</b>\n</x>", `{"x":{"a":"1","b":"2"}}`},
		{"CDATA becomes a string", "<x><![CDATA[<p>a & b</p>]]></x>", `{"x":"<p>a & b</p>"}`},
		{"CDATA and text join", "<x>a<![CDATA[<b>]]>c</x>", `{"x":"a<b>c"}`},
		{"references", "<x>&lt;&gt;&amp;&quot;&apos;&#65;&#x42;&#x1F600;</x>", `{"x":"<>&\"'AB😀"}`},
		{"JSON escapes", "<x>\"\\\t\u2028x</x>", ""},
		{"line ends are normalised", "<x>a\r\nb\rc</x>", `{"x":"a\nb\nc"}`},
		{"escaped carriage return is kept", "<x>a&#13;b</x>", `{"x":"a\rb"}`},
		{"attribute white space is normalised", "<x a=\"1\t2\n3\" b=\"&#9;\"/>", `{"x":{"@a":"1 2 3","@b":"\t","#text":""}}`},
		{"comments and processing instructions are dropped", "<?xml version=\"1.0\"?><!-- c --><?pi x?><x><!-- c --><y>1</y><?pi?></x><!-- end -->",
			`{"x":{"y":"1"}}`},
		{"byte order mark", "\xEF\xBB\xBF<x>1</x>", `{"x":"1"}`},
		{"namespace prefixes are kept", `<ns:a xmlns:ns="urn:x"><ns:b>1</ns:b></ns:a>`, `{"ns:a":{"@xmlns:ns":"urn:x","ns:b":"1"}}`},
		{"non-ASCII names", "<größe><ñ>1</ñ></größe>", `{"größe":{"ñ":"1"}}`},
		{"custom_object inside object is text", "<object><custom_object>No</custom_object></object>",
			`{"object":{"custom_object":"No"}}`},
		{"empty custom_object inside object", "<object><custom_object/></object>", `{"object":{"custom_object":""}}`},
		{"single quotes in attributes", `<x a='say "hi"'/>`, `{"x":{"@a":"say \"hi\"","#text":""}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := XMLToJSON([]byte(tt.xml))
			if err != nil {
				t.Fatalf("XMLToJSON(%q): %v", tt.xml, err)
			}
			want := tt.want
			if want == "" {
				want = `{"x":"\"\\\t\u2028x"}`
			}
			if string(got) != want {
				t.Errorf("XMLToJSON(%q)\n got %s\nwant %s", tt.xml, got, want)
			}
		})
	}
}

// TestJSONToXMLMapping covers the rules of the way back.
func TestJSONToXMLMapping(t *testing.T) {
	const decl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	tests := []struct {
		name, json, want string
	}{
		{"interface order restored", `{"requirement":{"fields":{"field":[{"value":"x","name":"field_1"}]}}}`,
			"<requirement><fields><field><name>field_1</name><value>x</value></field></fields></requirement>"},
		{"single object where an array is expected", `{"feature":{"fields":{"field":{"name":"field_1","value":"2"}}}}`,
			"<feature><fields><field><name>field_1</name><value>2</value></field></fields></feature>"},
		{"literals", `{"x":{"n":1.50e3,"t":true,"f":false,"z":null,"s":""}}`,
			"<x><n>1.50e3</n><t>true</t><f>false</f><z/><s/></x>"},
		{"empty array writes nothing", `{"users":{"user":[]}}`, "<users/>"},
		{"empty array of a multiple picklist value is empty", `{"field":{"name":"f","value":{"value":[]}}}`,
			"<field><name>f</name><value/></field>"},
		{"empty array where one element belongs is empty", `{"field":{"name":"f","value":[]}}`,
			"<field><name>f</name><value/></field>"},
		{"null value is empty", `{"field":{"name":"f","value":null}}`, "<field><name>f</name><value/></field>"},
		{"empty object", `{"view":{}}`, "<view/>"},
		{"attributes", `{"value":{"#text":"Bob","@email":"b@x","@id":6}}`, `<value id="6" email="b@x">Bob</value>`},
		{"escaping", `{"x":{"@a":"<&>\"'\t\n\r","#text":"<&>\"' ]]> \r\n"}}`,
			`<x a="&lt;&amp;&gt;&quot;&apos;&#x9;&#xA;&#xD;">&lt;&amp;&gt;&quot;&apos; ]]&gt; &#xD;` + "\n</x>"},
		{"unknown keys keep JSON order", `{"x":{"z":"1","a":"2","m":["3","4"]}}`, "<x><z>1</z><a>2</a><m>3</m><m>4</m></x>"},
		{"known before unknown", `{"user":{"zz":"z","email":"e","user_id":1}}`,
			"<user><user_id>1</user_id><email>e</email><zz>z</zz></user>"},
		{"field definition order", `{"field":{"picklist_options":{"option":[{"label":"a","value":1}]},"type":"Textbox","id":3,"name":"field_3"}}`,
			"<field><id>3</id><name>field_3</name><type>Textbox</type><picklist_options><option><value>1</value><label>a</label></option></picklist_options></field>"},
		{"record field order", `{"field":{"sort":3,"list_type":"normal","value":"1","name":"field_3"}}`,
			"<field><name>field_3</name><value>1</value><list_type>normal</list_type><sort>3</sort></field>"},
		{"empty #text with children is ignored", `{"x":{"#text":"","y":"1"}}`, "<x><y>1</y></x>"},
		{"null attribute is empty", `{"x":{"@a":null}}`, `<x a=""/>`},
		{"escaped key characters", `{"x":{"\u00e9":"1"}}`, "<x><é>1</é></x>"},
		{"white space around the JSON", " \n\t{\"x\":\"1\"}\r\n ", "<x>1</x>"},
		{"unicode escapes", `{"x":"\u00e9\ud83d\ude00\/"}`, "<x>é😀/</x>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := JSONToXML([]byte(tt.json))
			if err != nil {
				t.Fatalf("JSONToXML(%s): %v", tt.json, err)
			}
			if want := decl + tt.want; string(got) != want {
				t.Errorf("JSONToXML(%s)\n got %s\nwant %s", tt.json, got, want)
			}
		})
	}
}

// TestLargeDocument checks that grouping stays linear when an element has many distinct children.
func TestLargeDocument(t *testing.T) {
	var b strings.Builder
	b.WriteString("<x>")
	for i := 0; i < 20000; i++ {
		b.WriteString("<a")
		b.WriteString(strings.Repeat("b", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(itoa3(i))
		b.WriteString("/>")
	}
	b.WriteString("</x>")
	js, err := XMLToJSON([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	x, err := JSONToXML(js)
	if err != nil {
		t.Fatal(err)
	}
	js2, err := XMLToJSON(x)
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != string(js2) {
		t.Error("round trip of a document with 20000 distinct names differs")
	}
}

func itoa3(i int) string {
	const d = "0123456789"
	return string([]byte{d[i/10000%10], d[i/1000%10], d[i/100%10], d[i/10%10], d[i%10]})
}

// TestCarriageReturns: a CR in a JSON string crosses to XML as a reference, since XML readers turn a
// literal CR or CR LF into LF, and comes back from XML, references and CDATA split around them alike,
// as the same string.
func TestCarriageReturns(t *testing.T) {
	const decl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	tests := []struct {
		name, json, xml string
		value           string // the <value> text as encoding/xml decodes the XML
	}{
		{"CR LF", `{"field":{"name":"f","value":"a\r\nb"}}`,
			"<field><name>f</name><value>a&#xD;\nb</value></field>", "a\r\nb"},
		{"lone CR", `{"field":{"name":"f","value":"a\rb\r"}}`,
			"<field><name>f</name><value>a&#xD;b&#xD;</value></field>", "a\rb\r"},
		{"CR only", `{"field":{"name":"f","value":"\r"}}`,
			"<field><name>f</name><value>&#xD;</value></field>", "\r"},
		{"CR LF only", `{"field":{"name":"f","value":"\r\n"}}`,
			"<field><name>f</name><value>&#xD;\n</value></field>", "\r\n"},
		{"attribute", `{"field":{"name":"f","value":{"@id":"1\r\n2","#text":"x"}}}`,
			"<field><name>f</name><value id=\"1&#xD;&#xA;2\">x</value></field>", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := JSONToXML([]byte(tt.json))
			if err != nil {
				t.Fatalf("JSONToXML: %v", err)
			}
			if got, want := string(x), decl+tt.xml; got != want {
				t.Errorf("JSONToXML(%s)\n got %q\nwant %q", tt.json, got, want)
			}
			var doc struct {
				Value string `xml:"value"`
			}
			if err := xml.Unmarshal(x, &doc); err != nil {
				t.Fatalf("encoding/xml: %v", err)
			}
			if doc.Value != tt.value {
				t.Errorf("encoding/xml decodes <value> as %q, want %q", doc.Value, tt.value)
			}
			js, err := XMLToJSON(x)
			if err != nil {
				t.Fatalf("XMLToJSON: %v", err)
			}
			if string(js) != tt.json {
				t.Errorf("XMLToJSON(JSONToXML(%s)) = %s", tt.json, js)
			}
		})
	}
}

// TestCarriageReturnsFromCore: the shapes in which the core writes a CR (a reference in text, a reference
// between CDATA sections) read as CR; a literal CR or CR LF reads as LF, as in any XML reader.
func TestCarriageReturnsFromCore(t *testing.T) {
	tests := []struct{ name, xml, want string }{
		{"reference in text", "<x>a&#xD;\nb&#xD;</x>", `{"x":"a\r\nb\r"}`},
		{"reference between CDATA sections", "<x><![CDATA[<p>a</p>]]>&#xD;<![CDATA[\n]]]]><![CDATA[>]]>&#xD;</x>",
			`{"x":"<p>a</p>\r\n]]>\r"}`},
		{"references only", "<x>&#xD;&#xD;</x>", `{"x":"\r\r"}`},
		{"literal CR LF in CDATA", "<x><![CDATA[a\r\nb\rc]]></x>", `{"x":"a\nb\nc"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := XMLToJSON([]byte(tt.xml))
			if err != nil {
				t.Fatalf("XMLToJSON(%q): %v", tt.xml, err)
			}
			if string(js) != tt.want {
				t.Errorf("XMLToJSON(%q)\n got %s\nwant %s", tt.xml, js, tt.want)
			}
			var doc struct {
				Text string `xml:",chardata"`
			}
			if err := xml.Unmarshal([]byte(tt.xml), &doc); err != nil {
				t.Fatalf("encoding/xml: %v", err)
			}
			var want struct{ X string }
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if doc.Text != want.X {
				t.Errorf("encoding/xml reads %q, XMLToJSON %q", doc.Text, want.X)
			}
		})
	}
}
