package deploy

import (
	"slices"
	"strings"
	"testing"
)

// statement is one Allow statement of a managed policy, rendered.
type statement struct {
	sid       string
	actions   []string
	resources []string
}

// policy returns the Allow statements of the managed policy resource name.
func policy(t *testing.T, tpl template, name string) []statement {
	t.Helper()
	r := get(tpl, "Resources", name)
	if get(r, "Type") != "AWS::IAM::ManagedPolicy" {
		t.Fatalf("Resources.%s is not an AWS::IAM::ManagedPolicy", name)
	}
	var out []statement
	stmts, _ := get(r, "Properties", "PolicyDocument", "Statement").([]any)
	for _, s := range stmts {
		if get(s, "Effect") != "Allow" {
			t.Errorf("%s: statement %s is not Allow", name, render(get(s, "Sid")))
			continue
		}
		if get(s, "NotAction") != nil || get(s, "NotResource") != nil {
			t.Errorf("%s: statement %s uses NotAction or NotResource", name, render(get(s, "Sid")))
		}
		out = append(out, statement{sid: render(get(s, "Sid")), actions: strs(get(s, "Action")), resources: strs(get(s, "Resource"))})
	}
	return out
}

// The resources each kind of action must name, exactly. The table's are the table and each
// index -create-table makes (tableResources).
var (
	bucketResources = []string{"!GetAtt ArtifactsBucket.Arn", "!GetAtt MetricsBucket.Arn"}
	objectResources = []string{"!Sub ${ArtifactsBucket.Arn}/*", "!Sub ${MetricsBucket.Arn}/*"}
	keyResources    = []string{"!If [CreateKey !GetAtt Key.Arn !Ref KmsKeyArn]"}
)

// tableResources returns the table's ARN and its indexes' as the template must name them: the
// indexes that Store.CreateTable creates.
func tableResources(t *testing.T) []string {
	t.Helper()
	in, _ := createTableInput(t)
	out := []string{"!GetAtt Table.Arn"}
	for _, g := range in.GlobalSecondaryIndexes {
		out = append(out, "!Sub ${Table.Arn}/index/"+*g.IndexName)
	}
	return out
}

// resourcesOf returns the resources action must be granted on.
func resourcesOf(action string, table []string) []string {
	switch {
	case strings.HasPrefix(action, "dynamodb:"):
		return table
	case action == "s3:ListBucket" || action == "s3:CreateBucket":
		return bucketResources
	case strings.HasPrefix(action, "s3:"):
		return objectResources
	case strings.HasPrefix(action, "kms:"):
		return keyResources
	}
	return nil
}

// checkPolicy compares the DynamoDB and S3 actions of the policy with want, and checks every
// statement's resources; it returns the policy's kms actions.
func checkPolicy(t *testing.T, tpl template, name string, want map[string][]string) []string {
	t.Helper()
	var got, kms []string
	table := tableResources(t)
	for _, s := range policy(t, tpl, name) {
		for _, a := range s.actions {
			if strings.Contains(a, "*") || !strings.Contains(a, ":") {
				t.Errorf("%s %s: action %q is a wildcard", name, s.sid, a)
				continue
			}
			if strings.HasPrefix(a, "kms:") {
				kms = append(kms, a)
			} else {
				got = append(got, a)
			}
			if r := resourcesOf(a, table); !slices.Equal(s.resources, r) {
				t.Errorf("%s %s: %s granted on %v, want exactly %v", name, s.sid, a, s.resources, r)
			}
		}
		for _, r := range s.resources {
			if r == "*" || strings.HasSuffix(r, ":*") || strings.Contains(r, "table/*") {
				t.Errorf("%s %s: resource %q is a wildcard", name, s.sid, r)
			}
		}
	}
	for _, a := range got {
		if _, ok := want[a]; !ok {
			t.Errorf("%s grants %s, which the code does not call", name, a)
		}
	}
	for _, a := range sortedKeys(want) {
		if !slices.Contains(got, a) {
			t.Errorf("%s lacks %s, which the code calls: %s", name, a, strings.Join(want[a], "; "))
		}
	}
	return kms
}

// TestPoliciesAreWhatTheCodeCalls compares ServerPolicy and OperatorPolicy with the DynamoDB and
// S3 operations derived from the code (calls_test.go): the server's, and the ones only
// -create-table, -seed and the commands reach. Neither may miss nor add an action.
func TestPoliciesAreWhatTheCodeCalls(t *testing.T) {
	tpl := loadTemplate(t)
	server, operator := actionSets(t, nil)
	t.Logf("server: %v", sortedKeys(server))
	t.Logf("operator: %v", sortedKeys(operator))
	if kms := checkPolicy(t, tpl, "ServerPolicy", server); !slices.Equal(kms, []string{"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey"}) {
		t.Errorf("ServerPolicy kms actions %v: the SDK needs Decrypt, Encrypt and GenerateDataKey on the key", kms)
	}
	if kms := checkPolicy(t, tpl, "OperatorPolicy", operator); kms != nil {
		t.Errorf("OperatorPolicy kms actions %v: the server policy's serve the operator too", kms)
	}
}

// TestRolesAndReadOnlyPolicy checks the seed's two roles made right for direct table access:
// read-only reads items, the index, the table's description and the objects and nothing else;
// DevOps holds the server's and the operator's policies.
func TestRolesAndReadOnlyPolicy(t *testing.T) {
	tpl := loadTemplate(t)
	want := map[string][]string{}
	for _, a := range []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:DescribeTable", "s3:GetObject", "s3:ListBucket"} {
		want[a] = []string{"the seed's read-only access"}
	}
	if kms := checkPolicy(t, tpl, "ReadOnlyPolicy", want); !slices.Equal(kms, []string{"kms:Decrypt"}) {
		t.Errorf("ReadOnlyPolicy kms actions %v, want kms:Decrypt only", kms)
	}
	for role, policies := range map[string][]string{
		"ReadOnlyRole": {"!Ref ReadOnlyPolicy"},
		"DevOpsRole":   {"!Ref ServerPolicy", "!Ref OperatorPolicy"},
	} {
		r := get(tpl, "Resources", role)
		if get(r, "Type") != "AWS::IAM::Role" {
			t.Errorf("Resources.%s is not an AWS::IAM::Role", role)
			continue
		}
		if got := strs(get(r, "Properties", "ManagedPolicyArns")); !slices.Equal(got, policies) {
			t.Errorf("%s ManagedPolicyArns = %v, want %v", role, got, policies)
		}
		if get(r, "Properties", "Policies") != nil {
			t.Errorf("%s has inline policies: keep its grants in the tested managed policies", role)
		}
	}
	// No other managed policy or role grants anything untested.
	for name, r := range section(tpl, "Resources") {
		switch get(r, "Type") {
		case "AWS::IAM::ManagedPolicy", "AWS::IAM::Policy", "AWS::IAM::Role", "AWS::IAM::User", "AWS::IAM::Group":
			if !slices.Contains([]string{"ServerPolicy", "OperatorPolicy", "ReadOnlyPolicy", "ReadOnlyRole", "DevOpsRole"}, name) {
				t.Errorf("IAM resource %s is not checked by the tests", name)
			}
		}
	}
}

// TestBuckets checks both buckets: encryption, public access blocked, versioning, a lifecycle
// rule with the age parameters, noncurrent versions and incomplete uploads expiring, and a
// bucket policy that refuses plain HTTP.
func TestBuckets(t *testing.T) {
	tpl := loadTemplate(t)
	for bucket, expiry := range map[string]string{"ArtifactsBucket": "!Ref ArtifactsExpirationDays", "MetricsBucket": "!Ref MetricsExpirationDays"} {
		p := get(tpl, "Resources", bucket, "Properties")
		for path, want := range map[string]string{
			"BucketEncryption.ServerSideEncryptionConfiguration.0.ServerSideEncryptionByDefault.SSEAlgorithm": "!Ref BucketEncryption",
			"PublicAccessBlockConfiguration.BlockPublicAcls":                                                  "true",
			"PublicAccessBlockConfiguration.BlockPublicPolicy":                                                "true",
			"PublicAccessBlockConfiguration.IgnorePublicAcls":                                                 "true",
			"PublicAccessBlockConfiguration.RestrictPublicBuckets":                                            "true",
			"VersioningConfiguration.Status":                                                                  "Enabled",
			"LifecycleConfiguration.Rules.0.Status":                                                           "Enabled",
			"LifecycleConfiguration.Rules.0.ExpirationInDays":                                                 expiry,
			"LifecycleConfiguration.Rules.0.NoncurrentVersionExpiration.NoncurrentDays":                       "!Ref NoncurrentVersionDays",
			"LifecycleConfiguration.Rules.0.AbortIncompleteMultipartUpload.DaysAfterInitiation":               "!Ref AbortMultipartDays",
		} {
			if got := render(get(p, strings.Split(path, ".")...)); got != want {
				t.Errorf("%s %s = %s, want %s", bucket, path, got, want)
			}
		}
		found := false
		for name, r := range section(tpl, "Resources") {
			if get(r, "Type") != "AWS::S3::BucketPolicy" || render(get(r, "Properties", "Bucket")) != "!Ref "+bucket {
				continue
			}
			s := get(r, "Properties", "PolicyDocument", "Statement", "0")
			found = get(s, "Effect") == "Deny" && render(get(s, "Condition")) == "{Bool:{aws:SecureTransport:false}}" &&
				slices.Equal(strs(get(s, "Resource")), []string{"!GetAtt " + bucket + ".Arn", "!Sub ${" + bucket + ".Arn}/*"})
			if !found {
				t.Errorf("%s: its first statement does not deny insecure transport on the bucket and its objects", name)
			}
		}
		if !found {
			t.Errorf("%s has no bucket policy refusing plain HTTP", bucket)
		}
	}
	if got := render(get(tpl, "Resources", "MetricsBucket", "Properties", "LifecycleConfiguration", "Rules", "0", "Transitions")); got != "[{StorageClass:STANDARD_IA TransitionInDays:!Ref MetricsTransitionDays}]" {
		t.Errorf("metrics transition = %s", got)
	}
	// S3 refuses an expiration at or before the transition.
	tr, ex := render(get(tpl, "Parameters", "MetricsTransitionDays", "Default")), render(get(tpl, "Parameters", "MetricsExpirationDays", "Default"))
	if len(tr) > len(ex) || len(tr) == len(ex) && tr >= ex {
		t.Errorf("default MetricsExpirationDays %s must exceed MetricsTransitionDays %s", ex, tr)
	}
	for _, o := range []string{"TableName", "TableArn", "ArtifactsBucketName", "MetricsBucketName", "KmsKeyArn", "ServerPolicyArn", "OperatorPolicyArn", "ReadOnlyPolicyArn", "ReadOnlyRoleArn", "DevOpsRoleArn"} {
		if get(tpl, "Outputs", o, "Value") == nil {
			t.Errorf("no output %s", o)
		}
	}
}
