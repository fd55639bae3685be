# Sourced by the capture scripts: `capture_one NAME MODEL [capture flags...]` captures MODEL with
# the project's CLI into its own store under $HOME_DIR and exports it to $OUT/NAME.zip (log beside).
capture_one() {
  local name=$1 model=$2; shift 2
  local run start=$SECONDS
  run=$(python3 -m compile_viz.cli capture "$model" --home "$HOME_DIR/$name" "$@" > "$OUT/$name.log" 2>&1
        tail -1 "$OUT/$name.log")
  if python3 -m compile_viz.cli export "$run" "$OUT/$name.zip" --home "$HOME_DIR/$name" >> "$OUT/$name.log" 2>&1; then
    echo "$name: $(du -h "$OUT/$name.zip" | cut -f1) in $((SECONDS - start)) s"
  else
    echo "$name: FAILED"; tail -5 "$OUT/$name.log"
  fi
}
