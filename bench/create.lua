-- POST /pets for wrk: every request adds the same pet.
wrk.method = "POST"
wrk.body = '{"name":"Rex","categoryId":3,"status":"available"}'
wrk.headers["Content-Type"] = "application/json"
