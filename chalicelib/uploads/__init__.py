"""Uploads: files over the direct limit of a request body, put to S3 through a presigned URL and then named
by the operation that takes them (`?uploadLocator=`), DECISIONS.md "Uploads"."""
