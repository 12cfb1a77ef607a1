# Cueue's container image. Build: docker build -t cueue:latest .
# (without a Docker daemon, scripts/build-image.sh makes the same image as
# an OCI image layout; docs/install.md, "The image").
#
# Stage 1 builds `cueue` on Debian 12 with the -dev packages of
# scripts/install-deps.sh, then assembles the runtime root filesystem with
# scripts/build-image.sh --rootfs: the stripped binary, exactly the shared
# libraries `ldd` lists for it, their Debian packages' copyright files and
# a passwd entry for the non-root user 65532.
FROM debian:12 AS build
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends build-essential cmake pkg-config \
      libyaml-dev libjson-c-dev libcmocka-dev libev-dev libmicrohttpd-dev libsqlite3-dev \
      libgnutls28-dev libcurl4-openssl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN rm -rf build \
 && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null \
 && cmake --build build -j"$(nproc)" --target cueue \
 && scripts/build-image.sh --rootfs build/cueue /rootfs \
 && chroot /rootfs /cueue --version

# Stage 2: nothing but that root filesystem.
FROM scratch
COPY --from=build /rootfs /
USER 65532:65532
ENTRYPOINT ["/cueue"]
CMD ["controller"]
