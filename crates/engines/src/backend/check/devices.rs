//! What the machine says about IAA and QAT devices (`/dev/iax`, idxd under
//! sysfs, the QAT control device and drivers), as readable facts for
//! `cannery backends`. It reads only; it opens a work queue to learn whether
//! this process may use it, and never submits anything.

/// Facts about IAA devices: `/dev/iax` work queues (and whether this
/// process may open them) and the idxd devices under `/sys/bus/dsa/devices`.
pub fn iaa_devices() -> Vec<String> {
    let mut facts = Vec::new();
    match std::fs::read_dir("/dev/iax") {
        Err(_) => facts.push("no /dev/iax (no IAA work queue is enabled)".to_string()),
        Ok(dir) => {
            let mut wqs: Vec<_> = dir.flatten().map(|e| e.path()).collect();
            wqs.sort();
            if wqs.is_empty() {
                facts.push("/dev/iax is empty (no IAA work queue is enabled)".into());
            }
            for p in wqs {
                let access = match std::fs::OpenOptions::new().read(true).write(true).open(&p) {
                    Ok(_) => "usable".to_string(),
                    Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                        "no permission (run as root or grant access to the work queue)".into()
                    }
                    Err(e) => format!("cannot open: {e}"),
                };
                facts.push(format!("{}: {access}", p.display()));
            }
        }
    }
    match std::fs::read_dir("/sys/bus/dsa/devices") {
        Err(_) => facts.push("no /sys/bus/dsa/devices (idxd driver not loaded)".into()),
        Ok(dir) => {
            let mut names: Vec<String> = dir
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            let iax: Vec<_> = names.iter().filter(|n| n.starts_with("iax")).collect();
            if iax.is_empty() {
                facts.push("no IAA device under /sys/bus/dsa/devices".into());
            }
            for n in iax {
                facts.push(format!("/sys/bus/dsa/devices/{n}"));
            }
            for n in names.iter().filter(|n| n.starts_with("wq")) {
                let base = format!("/sys/bus/dsa/devices/{n}");
                let read = |f: &str| {
                    std::fs::read_to_string(format!("{base}/{f}"))
                        .map(|s| s.trim().to_string())
                        .unwrap_or_else(|_| "?".into())
                };
                facts.push(format!(
                    "{base}: state {}, mode {}, type {}",
                    read("state"),
                    read("mode"),
                    read("type")
                ));
            }
        }
    }
    facts
}

/// Facts about QAT devices: the control device and the kernel drivers.
pub fn qat_devices() -> Vec<String> {
    let mut facts = Vec::new();
    if std::path::Path::new("/dev/qat_adf_ctl").exists() {
        facts.push("/dev/qat_adf_ctl present".into());
    } else {
        facts.push("no /dev/qat_adf_ctl (no QAT device or driver)".into());
    }
    let drivers: Vec<String> = std::fs::read_dir("/sys/bus/pci/drivers")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("qat") || n.ends_with("xxx"))
                .collect()
        })
        .unwrap_or_default();
    if drivers.is_empty() {
        facts.push("no qat pci driver bound".into());
    } else {
        facts.push(format!("qat pci drivers: {}", drivers.join(", ")));
    }
    facts
}
