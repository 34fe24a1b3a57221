package blob

// SetListPage sets the ListObjectsV2 page size of s, so that tests reach the second page of a
// listing without writing a thousand objects.
func SetListPage(s *Store, n int32) { s.listPage = n }
