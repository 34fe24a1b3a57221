//go:build unix

package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
)

// BenchmarkEmbeddedCall is one DynamoDB call of the embedded default's client (the Embedded as
// HTTPClient, as server.go builds it) served in process: what each cold read's calls cost,
// without the GraphQL around them. Profile it with -cpuprofile.
func BenchmarkEmbeddedCall(b *testing.B) {
	emb, err := dynamo.StartEmbedded(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	ctx := context.Background()
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key, HTTPClient: emb}})
	if err != nil {
		b.Fatal(err)
	}
	if err := dynamo.New(client, dynamo.Options{}).CreateTable(ctx, time.Minute); err != nil {
		b.Fatal(err)
	}
	table := aws.String(dynamo.DefaultTable)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	for i := range 20 {
		item := map[string]types.AttributeValue{"PK": s("CAP#bench"), "SK": s(fmt.Sprintf("COMP#%03d", i)), "Data": s(strings.Repeat("x", 200))}
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("GetItem", func(b *testing.B) {
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"PK": s("CAP#bench"), "SK": s("COMP#007")}})
			if err != nil || out.Item == nil {
				b.Fatalf("GetItem = %v, %v", out, err)
			}
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("Query 20", func(b *testing.B) {
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			out, err := client.Query(ctx, &dynamodb.QueryInput{TableName: table, ConsistentRead: aws.Bool(true),
				KeyConditionExpression:    aws.String("PK = :pk"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s("CAP#bench")}})
			if err != nil || len(out.Items) != 20 {
				b.Fatalf("Query = %v, %v", out, err)
			}
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	})
}

// processCPU returns the user plus system CPU time this process has used: steadier than the
// wall time on a shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
