package dynamo

import (
	"bytes"
	"context"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/internal/awsconf"
)

// BenchmarkSDKCall is one Query answered by a local server with a fixed response of 8
// components: the cost of a DynamoDB call in this process, from the SDK's middleware to the
// decoded items, against a plain HTTP POST of the same bytes.
func BenchmarkSDKCall(b *testing.B) {
	var comps []*item
	for _, it := range sampleItems(b) {
		if it.EntityType == entityComponent && len(comps) < 8 {
			comps = append(comps, it)
		}
	}
	body := queryBody(b, comps)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	client, err := NewClient(context.Background(), ClientConfig{Options: awsconf.Options{Endpoint: srv.URL}})
	if err != nil {
		b.Fatal(err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String("catalogue"), KeyConditionExpression: aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#pk": "PK", "#sk": "SK"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "CAPABILITY#X"},
			":lo": &types.AttributeValueMemberS{Value: "COMPONENT#"}, ":hi": &types.AttributeValueMemberS{Value: "DEPENDENCY$"}},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
	b.Run("sdk+wire", func(b *testing.B) {
		b.ReportAllocs()
		ctx := withWireItems(context.Background())
		for b.Loop() {
			if _, err := client.Query(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := client.Query(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("http", func(b *testing.B) {
		b.ReportAllocs()
		req := []byte(`{"TableName":"catalogue","KeyConditionExpression":"#pk = :pk"}`)
		for b.Loop() {
			resp, err := http.Post(srv.URL, "application/x-amz-json-1.0", bytes.NewReader(req))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
