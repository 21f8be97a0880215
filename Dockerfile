# runlet as a container image. It drives the host's podman through its socket
# (mounted from the host), so the image holds only the static binary.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.1.0-dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/runlet ./cmd/runlet

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/runlet /usr/local/bin/runlet
ENTRYPOINT ["/usr/local/bin/runlet"]
