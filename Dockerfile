# Build a static binary, then run it as a non-root user with host keys on a volume.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/raxol-ssh ./cmd/raxol-ssh \
 && mkdir -m 0700 /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/raxol-ssh /usr/local/bin/raxol-ssh
# A new named volume takes this directory's owner, so the non-root user can
# write the host key there.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME ["/data"]
EXPOSE 2222 8080
USER nonroot:nonroot
# Memory: run the container with a limit (docker run --memory 1g, compose
# mem_limit). raxol-ssh reads its cgroup's limit and gives the Go runtime
# 90% of it as its memory limit (logged as memory_limit in the posture
# line); GOMEMLIMIT, if set (-e GOMEMLIMIT=800MiB), is obeyed instead.
# Inside a container the listeners must bind beyond loopback: either give
# --env prod --authorized-keys, or (demo only) --allow-anonymous-public.
ENTRYPOINT ["/usr/local/bin/raxol-ssh", "--data-dir", "/data", "--ssh-addr", "0.0.0.0:2222", "--http-addr", "0.0.0.0:8080"]
