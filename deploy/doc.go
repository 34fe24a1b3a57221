// Package deploy holds the AWS infrastructure of the catalogue as code: cloudformation.yaml
// (the DynamoDB table, the two S3 buckets, the KMS key and the IAM managed policies and roles),
// and the tests that keep it equal to the code: the table to what -create-table creates, the
// policies' actions to the DynamoDB and S3 operations the server and the operator commands
// issue. It has no Go code of its own; docs/deploy.md explains the stack.
package deploy
