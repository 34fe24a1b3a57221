package deploy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/capcat/catalogue/dynamo"
)

// tag is a CloudFormation short-form intrinsic function (!Ref X, !GetAtt R.A, !Sub "...", !If
// [...], ...) as the YAML holds it: the tag's name without "!" and its value.
type tag struct {
	name  string
	value any
}

// template is cloudformation.yaml as maps, lists, strings and tags.
type template = map[string]any

func loadTemplate(t *testing.T) template {
	t.Helper()
	src, err := os.ReadFile("cloudformation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		t.Fatalf("parse cloudformation.yaml: %v", err)
	}
	if len(f.Docs) != 1 {
		t.Fatalf("cloudformation.yaml holds %d documents, want 1", len(f.Docs))
	}
	v, err := convert(f.Docs[0].Body)
	if err != nil {
		t.Fatalf("cloudformation.yaml: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("cloudformation.yaml is a %T, want a mapping", v)
	}
	return m
}

// convert turns a YAML node into maps, lists, strings (every scalar, as written) and tags.
func convert(n ast.Node) (any, error) {
	switch n := n.(type) {
	case *ast.MappingNode:
		m := map[string]any{}
		for _, kv := range n.Values {
			if err := putPair(m, kv); err != nil {
				return nil, err
			}
		}
		return m, nil
	case *ast.MappingValueNode:
		m := map[string]any{}
		return m, putPair(m, n)
	case *ast.SequenceNode:
		l := []any{}
		for _, e := range n.Values {
			v, err := convert(e)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case *ast.TagNode:
		v, err := convert(n.Value)
		if err != nil {
			return nil, err
		}
		return tag{name: strings.TrimPrefix(n.Start.Value, "!"), value: v}, nil
	case *ast.StringNode:
		return n.Value, nil
	case *ast.LiteralNode:
		return n.Value.Value, nil
	case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode:
		return nil, fmt.Errorf("line %d: anchors, aliases and merge keys are not used in the template", n.GetToken().Position.Line)
	case ast.ScalarNode:
		return n.GetToken().Value, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node %T", n.GetToken().Position.Line, n)
}

func putPair(m map[string]any, kv *ast.MappingValueNode) error {
	k := kv.Key.GetToken().Value
	if _, dup := m[k]; dup {
		return fmt.Errorf("line %d: key %s twice", kv.Key.GetToken().Position.Line, k)
	}
	v, err := convert(kv.Value)
	m[k] = v
	return err
}

// get walks a path of mapping keys and list indexes.
func get(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func section(tpl template, name string) map[string]any {
	m, _ := tpl[name].(map[string]any)
	return m
}

// render writes a value compactly: "!GetAtt Table.Arn", "!Sub ${Table.Arn}/*", "[a b]".
func render(v any) string {
	switch x := v.(type) {
	case tag:
		return "!" + x.name + " " + render(x.value)
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, render(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case map[string]any:
		var parts []string
		for _, k := range sortedKeys(x) {
			parts = append(parts, k+":"+render(x[k]))
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	return fmt.Sprint(v)
}

// strs returns a string or a list of strings as a list (nil for anything else).
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, render(e))
		}
		return out
	}
	return []string{render(v)}
}

var subRef = regexp.MustCompile(`\$\{([^}!][^}]*)\}`)

// TestTemplateIsWellFormed checks what CloudFormation would refuse: a resource without a Type,
// a !Ref, !GetAtt or !Sub naming nothing, an !If or Condition naming no condition, an
// intrinsic function it does not know.
func TestTemplateIsWellFormed(t *testing.T) {
	tpl := loadTemplate(t)
	known := []string{"AWSTemplateFormatVersion", "Description", "Parameters", "Conditions", "Resources", "Outputs", "Metadata", "Mappings", "Rules", "Transform"}
	for k := range tpl {
		if !slices.Contains(known, k) {
			t.Errorf("top-level section %s: CloudFormation has none of that name", k)
		}
	}
	params, conds, res := section(tpl, "Parameters"), section(tpl, "Conditions"), section(tpl, "Resources")
	if len(res) == 0 {
		t.Fatal("no Resources")
	}
	for name, p := range params {
		if _, clash := res[name]; clash {
			t.Errorf("%s is both a parameter and a resource", name)
		}
		if ty, _ := get(p, "Type").(string); ty != "String" && ty != "Number" {
			t.Errorf("parameter %s: Type %q, want String or Number", name, ty)
		}
	}
	for name, r := range res {
		ty, _ := get(r, "Type").(string)
		if !regexp.MustCompile(`^AWS::\w+::\w+$`).MatchString(ty) {
			t.Errorf("resource %s: Type %q", name, ty)
		}
		if _, ok := get(r, "Properties").(map[string]any); !ok {
			t.Errorf("resource %s: no Properties", name)
		}
		if c, ok := get(r, "Condition").(string); ok && conds[c] == nil {
			t.Errorf("resource %s: Condition %s is not defined", name, c)
		}
	}
	isRef := func(n string) bool {
		return params[n] != nil || res[n] != nil || slices.Contains([]string{"AWS::AccountId", "AWS::NoValue", "AWS::Partition",
			"AWS::Region", "AWS::StackId", "AWS::StackName", "AWS::URLSuffix"}, n)
	}
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(where+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", where, i), e)
			}
		case tag:
			bad := func(format string, args ...any) {
				t.Errorf("%s: %s: %s", where, render(x), fmt.Sprintf(format, args...))
			}
			args, _ := x.value.([]any)
			switch x.name {
			case "Ref":
				if n, ok := x.value.(string); !ok || !isRef(n) {
					bad("names no parameter, resource or pseudo parameter")
				}
			case "GetAtt":
				n, _ := x.value.(string)
				r, attr, ok := strings.Cut(n, ".")
				if !ok || res[r] == nil || attr == "" {
					bad("names no resource attribute")
				}
			case "Sub":
				s, ok := x.value.(string)
				if !ok {
					bad("only the one-string form is used")
				}
				for _, m := range subRef.FindAllStringSubmatch(s, -1) {
					r, attr, dotted := strings.Cut(m[1], ".")
					if dotted && !strings.HasPrefix(m[1], "AWS::") && (res[r] == nil || attr == "") || !dotted && !isRef(m[1]) {
						bad("${%s} names nothing", m[1])
					}
				}
			case "If":
				if len(args) != 3 || conds[render(args[0])] == nil {
					bad("want [condition, then, else] with a defined condition")
				}
				for _, a := range args[1:] {
					walk(where, a)
				}
			case "Equals":
				if len(args) != 2 {
					bad("want two values")
				}
				walk(where, x.value)
			case "Not":
				if len(args) != 1 {
					bad("want one condition")
				}
				walk(where, x.value)
			case "And", "Or", "Join", "Select", "Split", "FindInMap", "Base64", "GetAZs", "ImportValue", "Cidr":
				walk(where, x.value)
			case "Condition":
				if conds[render(x.value)] == nil {
					bad("no such condition")
				}
			default:
				bad("unknown intrinsic function")
			}
		}
	}
	for _, s := range []string{"Conditions", "Resources", "Outputs"} {
		walk(s, tpl[s])
	}
	for name, o := range section(tpl, "Outputs") {
		if get(o, "Value") == nil {
			t.Errorf("output %s: no Value", name)
		}
	}
}

// fakeDB records what Store.CreateTable sends: the definition -create-table gives the table.
type fakeDB struct {
	dynamo.API
	create *dynamodb.CreateTableInput
	ttl    *dynamodb.UpdateTimeToLiveInput
}

func (f *fakeDB) CreateTable(_ context.Context, in *dynamodb.CreateTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	f.create = in
	return &dynamodb.CreateTableOutput{}, nil
}

func (f *fakeDB) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive}}, nil
}

func (f *fakeDB) UpdateTimeToLive(_ context.Context, in *dynamodb.UpdateTimeToLiveInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	f.ttl = in
	return &dynamodb.UpdateTimeToLiveOutput{}, nil
}

// createTableInput returns the requests -create-table sends (Store.CreateTable).
func createTableInput(t *testing.T) (*dynamodb.CreateTableInput, *dynamodb.UpdateTimeToLiveInput) {
	t.Helper()
	db := &fakeDB{}
	store := dynamo.New(db, dynamo.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := store.CreateTable(context.Background(), time.Second); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	if db.create == nil || db.ttl == nil {
		t.Fatal("CreateTable sent no CreateTable or no UpdateTimeToLive")
	}
	return db.create, db.ttl
}

func keySchema(ks []types.KeySchemaElement) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, aws.ToString(k.AttributeName)+":"+string(k.KeyType))
	}
	return strings.Join(parts, " ")
}

func templateKeySchema(v any) string {
	var parts []string
	for _, k := range v.([]any) {
		parts = append(parts, render(get(k, "AttributeName"))+":"+render(get(k, "KeyType")))
	}
	return strings.Join(parts, " ")
}

// TestTableIsWhatCreateTableMakes compares the template's table with the requests Store.CreateTable
// sends: keys, attribute types, GSI1 (name, keys, projection), billing mode, TTL attribute.
func TestTableIsWhatCreateTableMakes(t *testing.T) {
	tpl := loadTemplate(t)
	in, ttl := createTableInput(t)
	table := get(tpl, "Resources", "Table")
	if ty := get(table, "Type"); ty != "AWS::DynamoDB::Table" {
		t.Fatalf("Resources.Table is %v, want AWS::DynamoDB::Table", ty)
	}
	p := get(table, "Properties")
	if got := get(tpl, "Parameters", "TableName", "Default"); got != aws.ToString(in.TableName) || got != dynamo.DefaultTable {
		t.Errorf("TableName default %v; the code's default table is %s", got, aws.ToString(in.TableName))
	}
	if got := render(get(p, "TableName")); got != "!Ref TableName" {
		t.Errorf("TableName = %s, want !Ref TableName", got)
	}
	if got := get(p, "BillingMode"); got != string(in.BillingMode) {
		t.Errorf("BillingMode = %v, want %s", got, in.BillingMode)
	}
	var wantAttrs, gotAttrs []string
	for _, a := range in.AttributeDefinitions {
		wantAttrs = append(wantAttrs, aws.ToString(a.AttributeName)+":"+string(a.AttributeType))
	}
	for _, a := range get(p, "AttributeDefinitions").([]any) {
		gotAttrs = append(gotAttrs, render(get(a, "AttributeName"))+":"+render(get(a, "AttributeType")))
	}
	slices.Sort(wantAttrs)
	slices.Sort(gotAttrs)
	if !slices.Equal(gotAttrs, wantAttrs) {
		t.Errorf("AttributeDefinitions = %v, want %v", gotAttrs, wantAttrs)
	}
	if got, want := templateKeySchema(get(p, "KeySchema")), keySchema(in.KeySchema); got != want {
		t.Errorf("KeySchema = %s, want %s", got, want)
	}
	gsis, _ := get(p, "GlobalSecondaryIndexes").([]any)
	if len(gsis) != len(in.GlobalSecondaryIndexes) {
		t.Fatalf("%d GlobalSecondaryIndexes, want %d", len(gsis), len(in.GlobalSecondaryIndexes))
	}
	for i, want := range in.GlobalSecondaryIndexes {
		g := gsis[i]
		if got := get(g, "IndexName"); got != aws.ToString(want.IndexName) {
			t.Errorf("GSI %d IndexName = %v, want %s", i, got, aws.ToString(want.IndexName))
		}
		if got, w := templateKeySchema(get(g, "KeySchema")), keySchema(want.KeySchema); got != w {
			t.Errorf("GSI %s KeySchema = %s, want %s", aws.ToString(want.IndexName), got, w)
		}
		if got := get(g, "Projection", "ProjectionType"); got != string(want.Projection.ProjectionType) || get(g, "Projection", "NonKeyAttributes") != nil {
			t.Errorf("GSI %s Projection = %v, want %s", aws.ToString(want.IndexName), render(get(g, "Projection")), want.Projection.ProjectionType)
		}
	}
	if got := get(p, "TimeToLiveSpecification", "AttributeName"); got != aws.ToString(ttl.TimeToLiveSpecification.AttributeName) ||
		get(p, "TimeToLiveSpecification", "Enabled") != "true" {
		t.Errorf("TimeToLiveSpecification = %s, want TTL on %s enabled", render(get(p, "TimeToLiveSpecification")), aws.ToString(ttl.TimeToLiveSpecification.AttributeName))
	}
	// What the seed and the issue ask beyond -create-table.
	for path, want := range map[string]string{
		"PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled": "true",
		"SSESpecification.SSEEnabled":                                 "true",
		"SSESpecification.SSEType":                                    "KMS",
		"SSESpecification.KMSMasterKeyId":                             "!If [CreateKey !GetAtt Key.Arn !Ref KmsKeyArn]",
		"DeletionProtectionEnabled":                                   "true",
	} {
		if got := render(get(p, strings.Split(path, ".")...)); got != want {
			t.Errorf("Table %s = %s, want %s", path, got, want)
		}
	}
	if get(table, "DeletionPolicy") != "Retain" {
		t.Error("Table has no DeletionPolicy Retain")
	}
}
