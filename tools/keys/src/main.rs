//! `fluss-gateway-keys`: manages the API keys and users of the Fluss Lambda Gateway in their
//! Secrets Manager document. A new key is printed once, on stdout, and only its hash is stored;
//! `list` never prints a secret. AWS endpoint, region and credentials come from the standard
//! environment (`AWS_ENDPOINT_URL_SECRETS_MANAGER` for moto).
//!
//! Two edits at the same moment can lose one (Secrets Manager has no compare-and-set); run the
//! tool from one place at a time.

use std::process::ExitCode;

use gateway_auth::{Document, IdentityRef, Scope};
use gateway_aws::SecretsManager;

const USAGE: &str = "\
usage: fluss-gateway-keys [--secret-id ID] COMMAND
  create --principal P [--scope SPEC]... [--identity service|sasl:<secret id>] [--expires-at RFC3339]
  rotate KEY_ID            new key with KEY_ID's principal, scopes, identity and expiry
  revoke KEY_ID [--delete] disable the key (or remove it)
  list                     keys and users, never a secret
  set-user NAME [--scope SPEC]... [--identity ...]   password read from stdin (first line)
  set-identity SECRET --username U   stores U's Fluss SASL password (stdin) as the secret SECRET,
                           for keys created with --identity sasl:SECRET and for
                           gateway.cluster.<id>.connection.service.secret-id (no --secret-id)
SPEC: ops=read+write+ddl+config|*[,cluster=P][,database=P][,table=P]; P is *, prefix* or a name
--secret-id defaults to $FLUSS_GATEWAY__SECURITY__SECRET_ID.
exit codes: 0 done, 2 usage or document problem, 1 Secrets Manager failed";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fluss-gateway-keys: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            eprintln!("fluss-gateway-keys: {m}\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Problem(m)) => {
            eprintln!("fluss-gateway-keys: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Aws(m)) => {
            eprintln!("fluss-gateway-keys: {m}");
            ExitCode::FAILURE
        }
    }
}

enum Failure {
    /// A command line that cannot be read: the usage follows.
    Usage(String),
    /// A well-formed command that cannot be carried out (no such key, invalid document).
    Problem(String),
    Aws(String),
}

/// The options of one command line.
#[derive(Default)]
struct Options {
    secret_id: Option<String>,
    principal: Option<String>,
    username: Option<String>,
    scopes: Vec<Scope>,
    identity: IdentityRef,
    expires_at: Option<String>,
    delete: bool,
    positional: Vec<String>,
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--secret-id" => o.secret_id = Some(value("--secret-id")?),
            "--principal" => o.principal = Some(value("--principal")?),
            "--username" => o.username = Some(value("--username")?),
            "--scope" => o.scopes.push(Scope::parse_spec(&value("--scope")?)?),
            "--identity" => {
                let v = value("--identity")?;
                o.identity = IdentityRef::from_label(&v).ok_or_else(|| {
                    format!("--identity is `service` or `sasl:<secret id>`, not `{v}`")
                })?;
            }
            "--expires-at" => {
                let v = value("--expires-at")?;
                v.parse::<jiff::Timestamp>()
                    .map_err(|_| "--expires-at takes an RFC 3339 instant".to_owned())?;
                o.expires_at = Some(v);
            }
            "--delete" => o.delete = true,
            "-h" | "--help" => return Err("help".to_owned()),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => o.positional.push(arg),
        }
    }
    Ok(o)
}

async fn run(args: Vec<String>) -> Result<(), Failure> {
    let mut o = parse(args).map_err(Failure::Usage)?;
    let (command, rest) = o
        .positional
        .split_first()
        .ok_or_else(|| Failure::Usage("no command".into()))?;
    let (command, rest) = (command.clone(), rest.to_vec());
    let sm = SecretsManager::from_map(&std::env::vars().collect());
    // The one command that writes its own secret, not the key document.
    if command == "set-identity" {
        return set_identity(&sm, &rest, o.username.as_deref()).await;
    }
    let secret_id = o
        .secret_id
        .take()
        .or_else(|| std::env::var("FLUSS_GATEWAY__SECURITY__SECRET_ID").ok())
        .ok_or_else(|| Failure::Usage("no --secret-id".into()))?;
    let existing = sm.read_optional(&secret_id).await.map_err(Failure::Aws)?;
    let mut doc: Document = match &existing {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            Failure::Problem(format!("the document in `{secret_id}` is not valid: {e}"))
        })?,
        None => Document::default(),
    };
    let one = |what: &str| match rest.as_slice() {
        [id] => Ok(id.clone()),
        _ => Err(Failure::Usage(format!("{what} takes one KEY_ID"))),
    };
    match command.as_str() {
        "list" => {
            print_listing(&doc);
            return Ok(());
        }
        "create" => {
            let principal = o
                .principal
                .clone()
                .ok_or_else(|| Failure::Usage("create needs --principal".into()))?;
            if o.scopes.is_empty() {
                return Err(Failure::Usage("create needs at least one --scope".into()));
            }
            let (key_id, key) = doc
                .add_key(&principal, o.scopes, o.identity, o.expires_at)
                .map_err(Failure::Problem)?;
            save(&sm, &secret_id, &doc, existing.is_none()).await?;
            eprintln!("created key {key_id} for {principal}; it is shown once:");
            println!("{key}");
        }
        "rotate" => {
            let old = one("rotate")?;
            let (key_id, key) = doc.rotate_key(&old).map_err(Failure::Problem)?;
            save(&sm, &secret_id, &doc, false).await?;
            eprintln!(
                "created key {key_id} (replacing {old}, still valid until revoked); it is shown once:"
            );
            println!("{key}");
        }
        "revoke" => {
            let id = one("revoke")?;
            doc.revoke_key(&id, o.delete).map_err(Failure::Problem)?;
            save(&sm, &secret_id, &doc, false).await?;
            eprintln!(
                "{} key {id}; gateways stop accepting it within their cache TTL",
                if o.delete { "deleted" } else { "revoked" }
            );
        }
        "set-user" => {
            let name = match rest.as_slice() {
                [n] => n.clone(),
                _ => return Err(Failure::Usage("set-user takes one NAME".into())),
            };
            let password = read_password()?;
            doc.set_user(&name, &password, o.scopes, o.identity)
                .map_err(Failure::Problem)?;
            save(&sm, &secret_id, &doc, existing.is_none()).await?;
            eprintln!("user {name} set");
        }
        other => return Err(Failure::Usage(format!("unknown command `{other}`"))),
    }
    Ok(())
}

/// The `list` table: every key and user, with no secret.
fn print_listing(doc: &Document) {
    println!(
        "KIND  ID            PRINCIPAL        STATE     EXPIRES                   IDENTITY                 SCOPES"
    );
    for k in &doc.keys {
        println!(
            "key   {:<13} {:<16} {:<9} {:<25} {:<24} {}",
            k.key_id,
            k.principal,
            if k.disabled { "revoked" } else { "active" },
            k.expires_at.as_deref().unwrap_or("never"),
            k.identity.label(),
            scopes_text(&k.scopes)
        );
    }
    for u in &doc.users {
        println!(
            "user  {:<13} {:<16} {:<9} {:<25} {:<24} {}",
            "-",
            u.name,
            if u.disabled { "disabled" } else { "active" },
            "never",
            u.identity.label(),
            scopes_text(&u.scopes)
        );
    }
}

/// Writes `{"username","password"}` (the password from stdin) as the secret `rest[0]`.
async fn set_identity(
    sm: &SecretsManager,
    rest: &[String],
    username: Option<&str>,
) -> Result<(), Failure> {
    let [secret] = rest else {
        return Err(Failure::Usage("set-identity takes one SECRET".into()));
    };
    let username =
        username.ok_or_else(|| Failure::Usage("set-identity needs --username".into()))?;
    let password = read_password()?;
    let text = serde_json::json!({"username": username, "password": password}).to_string();
    let exists = sm
        .read_optional(secret)
        .await
        .map_err(Failure::Aws)?
        .is_some();
    sm.write(secret, &text, !exists)
        .await
        .map_err(Failure::Aws)?;
    eprintln!("Fluss identity {username} stored as secret {secret}");
    Ok(())
}

/// The first line of stdin, without its line end.
fn read_password() -> Result<String, Failure> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| Failure::Usage(format!("no password on stdin: {e}")))?;
    let password = line.trim_end_matches(['\r', '\n']).to_owned();
    if password.is_empty() {
        return Err(Failure::Usage("no password on stdin".into()));
    }
    Ok(password)
}

fn scopes_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| {
            format!(
                "{}@{}/{}/{}",
                s.operations.join("+"),
                s.cluster,
                s.database,
                s.table
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

async fn save(sm: &SecretsManager, id: &str, doc: &Document, create: bool) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(doc).map_err(|e| Failure::Problem(e.to_string()))?;
    sm.write(id, &text, create).await.map_err(Failure::Aws)
}
