# A minimal MCP server in POSIX sh for tests of interpreter command lines (`sh server.sh`): newline-delimited
# JSON-RPC on stdio, one tool (echo, which answers a fixed text). Builtins only, so the shell never forks or
# execs another program. It reads the id as the text between "id": and the next , or } (the warden's ids are numbers).
tools='{"tools":[{"name":"echo","description":"Echoes a fixed text","inputSchema":{"type":"object","properties":{}}}]}'
printf 'shell server: ready\n' >&2
while IFS= read -r line; do
  case "$line" in
    *'"id":'*) ;;
    *) continue ;;
  esac
  id=${line#*\"id\":}
  id=${id%%[,\}]*}
  case "$line" in
    *'"method":"initialize"'*) result='{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"shell-fixture","version":"1.0.0"}}' ;;
    *'"method":"tools/list"'*) result=$tools ;;
    *'"method":"tools/call"'*'"name":"echo"'*) result='{"content":[{"type":"text","text":"Echo from sh"}]}' ;;
    *'"method":"tools/call"'*) result='{"isError":true,"content":[{"type":"text","text":"Unknown tool"}]}' ;;
    *'"method":"ping"'*) result='{}' ;;
    *'"method":'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id"; continue ;;
    *) continue ;;
  esac
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$result"
done
