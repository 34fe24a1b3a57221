package dynamo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Snapshots of the whole table, for the embedded default's data file: every item exactly as
// stored (tokens, claims, leases and the archive's state included), as DynamoDB JSON. Unlike
// an export, a snapshot is not a catalogue format: it is what the server needs to resume where
// it stopped, idempotency included.

// TableItem is one whole item of the table, as a snapshot holds it.
type TableItem struct {
	av map[string]types.AttributeValue
}

// DumpTable returns every item of the table as one line of DynamoDB JSON (attributes in name
// order, no newline), by key. It reads the whole table with a paginated, strongly consistent
// Scan.
func (s *Store) DumpTable(ctx context.Context) (map[ItemKey][]byte, error) {
	in := &dynamodb.ScanInput{TableName: &s.table, ConsistentRead: aws.Bool(true)}
	out := map[ItemKey][]byte{}
	for {
		res, err := s.db.Scan(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("dump table: %w", classify("scan", err))
		}
		for _, m := range res.Items {
			b, err := appendDynamoJSONMap(nil, m)
			if err != nil {
				return nil, fmt.Errorf("dump table: item %s/%s: %w", str(m[attrPK]), str(m[attrSK]), err)
			}
			out[ItemKey{str(m[attrPK]), str(m[attrSK])}] = b
		}
		if len(res.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// ParseTableItem reads one line that DumpTable gave. It returns an error saying what is wrong
// when the line is not an item in DynamoDB JSON with string keys PK and SK.
func ParseTableItem(line []byte) (TableItem, error) {
	sc := &wireScanner{b: line}
	m := map[string]types.AttributeValue{}
	sc.object(func(key []byte) { m[unquote(key)] = sc.attributeValue() })
	sc.ws()
	if sc.err == nil && sc.i != len(sc.b) {
		sc.fail()
	}
	if sc.err != nil {
		return TableItem{}, fmt.Errorf("not an item in DynamoDB JSON: %w", sc.err)
	}
	if str(m[attrPK]) == "" || str(m[attrSK]) == "" {
		return TableItem{}, errors.New("an item without its string keys PK and SK")
	}
	return TableItem{av: m}, nil
}

// RestoreTable puts items into the table with BatchWriteItem, parallel calls at once,
// overwriting items with the same keys. It returns how many it wrote.
func (s *Store) RestoreTable(ctx context.Context, items []TableItem, parallel int) (int, error) {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it.av}}
	}
	if err := s.batchWrite(ctx, reqs, parallel); err != nil {
		return 0, fmt.Errorf("restore table: %w", err)
	}
	return len(reqs), nil
}

// appendDynamoJSONMap appends m as DynamoDB JSON ({"name": {"S": "..."}, ...}), names sorted.
func appendDynamoJSONMap(dst []byte, m map[string]types.AttributeValue) ([]byte, error) {
	return appendSortedMap(dst, m, appendDynamoJSON)
}

// appendDynamoJSON appends one attribute value as DynamoDB JSON.
func appendDynamoJSON(dst []byte, av types.AttributeValue) ([]byte, error) {
	tagged := func(tag string) []byte { return append(append(append(dst, `{"`...), tag...), `":`...) }
	strs := func(tag string, n int, elem func(int) string) []byte {
		dst = append(tagged(tag), '[')
		for i := range n {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, elem(i))
		}
		return append(dst, "]}"...)
	}
	b64 := base64.StdEncoding.EncodeToString
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return append(appendJSONString(tagged("S"), v.Value), '}'), nil
	case *types.AttributeValueMemberN:
		return append(appendJSONString(tagged("N"), v.Value), '}'), nil
	case *types.AttributeValueMemberB:
		return append(appendJSONString(tagged("B"), b64(v.Value)), '}'), nil
	case *types.AttributeValueMemberBOOL:
		return append(strconv.AppendBool(tagged("BOOL"), v.Value), '}'), nil
	case *types.AttributeValueMemberNULL:
		return append(strconv.AppendBool(tagged("NULL"), v.Value), '}'), nil
	case *types.AttributeValueMemberM:
		d, err := appendDynamoJSONMap(tagged("M"), v.Value)
		if err != nil {
			return nil, err
		}
		return append(d, '}'), nil
	case *types.AttributeValueMemberL:
		dst = append(tagged("L"), '[')
		for i, e := range v.Value {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendDynamoJSON(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, "]}"...), nil
	case *types.AttributeValueMemberSS:
		return strs("SS", len(v.Value), func(i int) string { return v.Value[i] }), nil
	case *types.AttributeValueMemberNS:
		return strs("NS", len(v.Value), func(i int) string { return v.Value[i] }), nil
	case *types.AttributeValueMemberBS:
		return strs("BS", len(v.Value), func(i int) string { return b64(v.Value[i]) }), nil
	}
	return nil, fmt.Errorf("attribute value of type %T", av)
}

// ItemKey is the primary key of an item.
type ItemKey struct{ PK, SK string }

// WrittenKeys returns the keys of the items that a DynamoDB write request (op PutItem,
// UpdateItem, DeleteItem, BatchWriteItem or TransactWriteItems, body its JSON) may change. ok is
// false when it cannot tell: another operation, or a body it cannot read.
func WrittenKeys(op string, body []byte) (keys []ItemKey, ok bool) {
	type attrs map[string]struct {
		S *string `json:"S"`
	}
	type keyed struct {
		Item attrs `json:"Item"`
		Key  attrs `json:"Key"`
	}
	var req struct {
		keyed
		RequestItems map[string][]struct {
			PutRequest    *keyed `json:"PutRequest"`
			DeleteRequest *keyed `json:"DeleteRequest"`
		} `json:"RequestItems"`
		TransactItems []struct {
			Put            *keyed `json:"Put"`
			Update         *keyed `json:"Update"`
			Delete         *keyed `json:"Delete"`
			ConditionCheck *keyed `json:"ConditionCheck"`
		} `json:"TransactItems"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, false
	}
	add := func(k *keyed) bool {
		if k == nil {
			return true
		}
		m := k.Key
		if m == nil {
			m = k.Item
		}
		pk, sk := m[attrPK].S, m[attrSK].S
		if pk == nil || sk == nil {
			return false
		}
		keys = append(keys, ItemKey{*pk, *sk})
		return true
	}
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem":
		return keys, add(&req.keyed)
	case "BatchWriteItem":
		for _, reqs := range req.RequestItems {
			for _, r := range reqs {
				if !add(r.PutRequest) || !add(r.DeleteRequest) {
					return nil, false
				}
			}
		}
		return keys, true
	case "TransactWriteItems":
		for _, t := range req.TransactItems {
			if !add(t.Put) || !add(t.Update) || !add(t.Delete) || !add(t.ConditionCheck) {
				return nil, false
			}
		}
		return keys, true
	}
	return nil, false
}

// DumpItems returns the items of keys as DumpTable gives them, read with strongly consistent
// BatchGetItem calls; a key without an item is not in the map.
func (s *Store) DumpItems(ctx context.Context, keys []ItemKey) (map[ItemKey][]byte, error) {
	out := make(map[ItemKey][]byte, len(keys))
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k.PK, k.SK}
	}
	err := s.batchGetEach(ctx, pairs, true, func(res *dynamodb.BatchGetItemOutput) error {
		for _, m := range res.Responses[s.table] {
			b, err := appendDynamoJSONMap(nil, m)
			if err != nil {
				return fmt.Errorf("item %s/%s: %w", str(m[attrPK]), str(m[attrSK]), err)
			}
			out[ItemKey{str(m[attrPK]), str(m[attrSK])}] = b
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dump items: %w", err)
	}
	return out, nil
}

// Key returns the item's primary key.
func (it TableItem) Key() ItemKey { return ItemKey{str(it.av[attrPK]), str(it.av[attrSK])} }

// Line returns the item as DumpTable gives it.
func (it TableItem) Line() ([]byte, error) { return appendDynamoJSONMap(nil, it.av) }
